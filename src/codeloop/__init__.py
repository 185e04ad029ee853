"""codeloop: a fast, open coding agent for the terminal, and a library for building such agents."""

__version__ = "0.1.0"
