"""Hooks in Claude Code's format: their configuration, the events they answer, their handlers
(command, HTTP, prompt) and the runner that folds their answers (hook_runner.py).

The tools' executor and the session call the runner; hooks import only what sits below them
(models, events, types, permission rules, the system helpers), never a tool or a face. Kept
empty so that importing one hook module does not import the rest.
"""
