"""Where the tokens went: each model request's usage recorded with what it sent, and read back
as costs per turn, tool, sub-agent, model and file (`codeloop usage`); the running totals per
model the loop keeps (costs.py)."""
