"""The Claude Agent SDK's message and control shapes over the front door, shared by the faces
that speak them (the SDK protocol in cli/sdk_protocol/, the Python API in api.py): turns.py
runs a prompt as the SDK's messages, json_lines.py renders events as those messages (and
`-p`'s json and stream-json), run_report.py is what every run reports on stderr and its exit
status, callbacks.py turns the SDK's permission and hook callbacks into codeloop's seams.
Nothing here imports a face, and nothing is imported here eagerly: start-up loads only the
module a face asks for.
"""
