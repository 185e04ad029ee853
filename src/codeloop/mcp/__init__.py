"""MCP servers through the official `mcp` SDK: configuration, connections, tools, resources,
prompts, OAuth and tool search.

Nothing here is imported at start-up unless a server is configured: server_config.py and sources.py
read the files without the SDK; the SDK (and pydantic with it, over a second) loads with the
first connection.
"""
