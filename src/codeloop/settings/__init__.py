"""Settings: Claude Code's settings files and codeloop's own, read, merged and checked
(settings_files.py), each key's meaning (settings_keys.py), each value's check
(settings_checks.py), what a problem in one means (settings_safety.py), and what acts once when a
session is assembled (settings_apply.py).

Settings sit below the tools and context management and above hooks: they import hooks'
configuration parser, events and types, never a tool, the session or a face. Kept empty so that
importing one settings module does not import the rest.
"""
