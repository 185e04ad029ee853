"""The model seam: one request shape, one normalized stream, one error taxonomy (base.py),
and an adapter per wire format, the retry policy, the catalog, record and replay.

A leaf layer: it imports only the shared vocabularies (types, events, errors, aio); its test
double, the scripted model, lives with the other doubles (testing/scripted.py).
"""
