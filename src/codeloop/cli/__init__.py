"""The command line: flags, the headless frontend (-p), `sessions` and `rewind`.

A frontend: it builds sessions (builder.py), renders their events and maps errors (errors.py)
to exit statuses. It may import anything below it; nothing in the package imports it.
"""
