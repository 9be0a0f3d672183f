"""Short-term memory (KZG) services, one idea per module (docs/behaviour/memory.md#short-term-memory):
`creation` (a salience write becomes an entry), `reinforcement` (neighbours sharing a theme),
`magnets` (entries naming the same entity), `gate` (queueing the promotion once an entry
crosses it), `retrieval` (the enricher's read), `edits` (the person's correction) and
`entry_text` (what is embedded and how themes compare). The entries themselves are stored by
`novaberg.store.short_term`."""
