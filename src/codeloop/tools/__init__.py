"""The tools the model calls (Read, Write, Edit, Bash, Grep, Glob, Task), their seam
(base.py), the streaming executor and the lazy registry.

It imports the shared vocabularies, the model seam's ToolSpec, hooks and the permission
vocabulary; never the loop, the session or a frontend.
"""
