"""The package's version, in a module of its own: whoever needs it (the MCP client's info,
telemetry's resource, `--version`) imports it without importing the package's public API."""

__version__ = "0.1.0"
