"""The tools' workspace: the session-scoped state tools share and mutate (tool_workspace.py), with
the parts it holds: background shells (background.py), the session-wide write lock
(write_lock.py) and what the session read of each file (file_stamp.py).

Vocabulary for the tools, context management and compaction alike, so it sits below all of them:
it imports the types, the system helpers and the teams' leaves (roster, task list), never a tool,
hooks, a model or a face. Kept empty so that importing one part does not import the rest.
"""
