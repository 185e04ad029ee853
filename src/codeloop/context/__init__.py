"""The context window: token counts, the tool-result budget, microcompact, compaction, the
memory files, the environment and the system prompt.

Below the loop and beside tools/: it imports the shared vocabularies (types, events, text),
the model seam (models/) for summary calls, and the tools' Workspace; never the loop or a
frontend.
"""
