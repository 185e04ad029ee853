"""What a session leaves on disk and how it is read back: where codeloop keeps its data
(data_paths.py), the transcript (transcript.py), a history repaired for the model APIs
(repair.py), the project's saved sessions (session_store.py), a session's timeline
(timeline.py) and continuing or forking one (resume.py).

It imports the vocabulary (types, events, errors) and, to sum a saved session up, the usage
ledger; never a tool, the session or a face. Kept empty so that importing one module does
not import the rest.
"""
