"""Who may do what: permission modes and decisions, Claude Code's rule syntax, the checks of a
Bash line and of file paths, which credentials a pipeline can reach, "allow always".

It sits above tools/ (it decides tool calls) and reads shell/ for what a command does.
"""
