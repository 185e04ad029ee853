"""Checkpoints and rewind: undo everything the agent changed in the workspace, shell commands
included, and cut the conversation back to the same moment.

`Checkpoints` (manager.py) is the interface every frontend uses: the session takes one before
each turn that can write, and `codeloop rewind`, the Python API and the SDK's `rewind_files`
rewind through it. Below it: objects.py (the content store), snapshot.py (a folder as trees),
journal.py (the list of checkpoints), restore.py (what a rewind changes, and changing it),
rewinding.py (files and conversation together: what every frontend calls), limits.py (what a
snapshot stores). Nothing is imported here: a session holds its `Checkpoints` without loading
the modules that take them until it first writes.
"""
