"""Agent teams and what a session's agents share: teammates as background sub-agent loops
(teammates.py), the roster and mailboxes (team_mail.py) and the session's task list
(task_list.py).

team_mail.py and task_list.py are leaves the tools reach through the workspace; teammates.py sits
above the sub-agents it drives and below the session. Kept empty so that the leaves do not pull
in the teammates' loop.
"""
