"""Doubles and helpers shared by tests and benches: the scenario format and the scripted model
that serves it, the fake model server, crash and long-session harnesses. Imported by tests and
benches only, never by the product's own code (an import-linter contract holds it).
"""
