"""Which Bash lines run under git's protective environment (git_env.py): those whose git
commands are all read-only. Apart from git_env, which git_check imports, so that the grammar of
git loads with the first line that runs git and no cycle joins the two."""

from __future__ import annotations


def needs_protection(command: str) -> bool:
    """Does this line run git only read-only? Then it runs under `protective_env` (a line that
    also commits keeps its hooks: that git command was approved as a writer)."""
    from codeloop.shell.bash_parse import parse_command
    from codeloop.shell.command_effects import command_name, unwrap

    gits = []
    for cmd in parse_command(command).commands:
        inv = unwrap(cmd)
        if inv.argv and command_name(inv.argv[0]) == "git":
            gits.append(inv)
    if not gits:
        return False
    from codeloop.shell.git_check import git_problem  # loads with the first git line

    return all(not any(g.dynamic) and git_problem(g.argv[1:]) is None for g in gits)
