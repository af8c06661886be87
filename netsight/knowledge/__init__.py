"""The knowledge base: finding occurrences and the fixes learned from the watch stream.

It stores what netsight observes (``observer.py``: which findings appear and disappear, and
``fix_changes.py``: the changes that made them disappear) in SQLite or PostgreSQL
(``database.py``, ``migrations.py``) through one writer thread (``write_queue.py``), and
answers explain_finding (``lookups.py``). It does I/O, so it sits above the analyzers,
whose signatures (``analyzers/core/signatures.py``) it keys everything by; the server opens
it (``knowledge_base.py``).
"""
