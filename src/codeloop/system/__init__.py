"""What codeloop needs from the machine it runs on: helper processes with a time bound and the
one way a process group is stopped (procs.py), the groups that die with codeloop (reaper.py),
async waits an abort can interrupt (aio.py), numbers and switches from environment variables
(env_values.py), JSON files edited for the user, written atomically (jsonfile.py), and what
value types and pattern tables are declared with, paid for on first use (valueclass.py,
lazy_pattern.py).

The bottom of the house: it imports nothing of codeloop's but itself, so every layer may use it.
Kept empty so that importing one helper does not import the rest.
"""
