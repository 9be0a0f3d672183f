-- A person can correct or delete a long-term node (docs/behaviour/memory.md#correcting-and-deleting).
--
-- A corrected node keeps its id, provenance, weights and edges; its text and embedding are
-- the person's and `korrigiert_am` says when they changed it.
ALTER TABLE lzg_knoten ADD COLUMN IF NOT EXISTS korrigiert_am TIMESTAMPTZ;

-- A deleted node is removed (its edges go with it), and every short-term key it was made
-- from or reinforced by is kept here: a promotion or an import of one of these keys never
-- creates a node again. No text of the deleted memory is kept.
CREATE TABLE IF NOT EXISTS lzg_geloescht (
    kzg_key      TEXT PRIMARY KEY,
    lzg_id       BIGINT NOT NULL,
    user_id      TEXT NOT NULL,
    character_id TEXT NOT NULL,
    geloescht_am TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS lzg_geloescht_paar ON lzg_geloescht (user_id, character_id);
