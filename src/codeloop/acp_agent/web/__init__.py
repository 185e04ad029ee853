"""`codeloop serve` and `codeloop web`: the ACP agent over WebSocket (and the SDK's streamable
HTTP) at /acp, behind a token, Host and Origin guard, with the web UI's static files at /. Only
this package imports Starlette and uvicorn (the `serve` extra)."""
