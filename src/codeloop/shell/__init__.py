"""Shell analysis: what a Bash line runs and whether it only reads. The tree-sitter parse
(bash_parse.py), each command with its wrappers taken off and the paths it writes
(command_effects.py), the read-only table (readonly.py) and its checks of arguments
(argv_checks.py) on each program's option grammar (argv_spec.py, ripgrep.py), sed and awk
programs (scripts.py), the names of secrets (secret_names.py), git's grammar and the protective
config it runs under (git_check.py, git_env.py), and the bubblewrap sandbox (sandbox.py).

It imports nothing of codeloop's but itself and the system helpers (value classes, patterns
compiled on first use), so it can be tested against the real shell alone;
permissions/ decides what to do with its answers. Kept empty so that importing one module does
not import the rest (the parser loads with the first Bash call).
"""
