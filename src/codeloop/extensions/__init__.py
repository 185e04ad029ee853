"""Claude Code's extension files: custom commands, agents, skills, output styles and plugins.

Each module loads one kind from its folders (project, user, managed, plugins) in Claude Code's
format; `frontmatter.py` reads the YAML header they share. Loading never fails on one bad
file: the file is skipped and named.
"""
