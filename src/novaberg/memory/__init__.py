"""Memory services: session summary, short-term (KZG, Redis) and long-term (LZG, PostgreSQL)
memory, goals and character profiles, plus the background jobs that maintain them.

`store/` holds the storage (no model calls); this package adds the model calls (condense,
embed, summarise, distil) and the rules of docs/behaviour/memory.md.
"""
