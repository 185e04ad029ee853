"""Who may do what: permission modes and decisions, Claude Code's rule syntax, the parsed
shell, file checks, the sandbox.

It imports the tools' seam (tools/base.py) to judge a call, and nothing above it.
"""
