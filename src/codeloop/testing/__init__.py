"""Doubles and helpers shared by tests and benches: the scenario format, the fake model
server, crash and long-session harnesses. Imported by tests, benches and the scripted model;
never by the product's own code paths.
"""
