"""Language servers, as Claude Code's plugins configure them (`lspServers`): their configuration
(config.py), one running server (server.py), the session's servers started lazily by file
(servers.py), results written out for the model (answers.py, places.py), what can go wrong
(errors.py) and the diagnostics an edit brought (diagnostics.py). The protocol library (pygls,
lsprotocol: the `lsp` extra) loads only when a server starts, and off the event loop."""
