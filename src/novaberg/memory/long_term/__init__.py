"""Long-term memory (LZG) services, one idea per module (docs/behaviour/memory.md#long-term-memory):
`promotion` (a short-term entry becomes or strengthens a node, joined by edges), `edges`
(the edge math, pure), `spreading` (the enricher's read along the edges), `decay`
(Ebbinghaus, nightly) and `edits` (the person's corrections and deletions). The rows they
read and write are in `novaberg.store.long_term_*`."""
