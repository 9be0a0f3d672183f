"""Hybrid search over a pair's whole memory, one idea per module
(docs/behaviour/memory.md#hybrid-search): `hybrid` (`search_memory`, the one function people,
the enricher and tools call), `results` (options, hits and their sources), `lists` (the
ranked lists of every layer and method) and `provenance` (what each top hit rests on).
Reciprocal rank fusion is `memory/fusion.py`."""
