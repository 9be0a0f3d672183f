-- The library: folders a person approved for reading, the files found in them and their
-- passages, searchable by words and by vector (docs/behaviour/library.md; the code that
-- keeps the invariants below is store/library.py).

-- A folder the person allowed the character to read ("root"). `pfad` is the resolved real
-- path; `zustand` 'freigegeben' while it may be read, 'widerrufen' once revoked (its files
-- and passages are deleted then; the row stays as the record of the decision).
CREATE TABLE IF NOT EXISTS dateien_wurzeln (
    id             BIGSERIAL PRIMARY KEY,
    user_id        TEXT NOT NULL,
    pfad           TEXT NOT NULL,
    zustand        TEXT NOT NULL DEFAULT 'freigegeben'
                   CHECK (zustand IN ('freigegeben', 'widerrufen')),
    freigegeben_am TIMESTAMPTZ NOT NULL DEFAULT now(),
    widerrufen_am  TIMESTAMPTZ,
    UNIQUE (user_id, pfad)
);

-- A file of a root as last indexed: `pfad` relative to the root; `inhalt_hash` (SHA-256)
-- and `mtime`/`groesse` decide whether a rerun reads it again. `status` 'ok' (its passages
-- are stored), 'fehler' (could not be parsed: `grund` says why) or 'uebersprungen' (over a
-- limit: `grund` names the setting). A file is written with its passages in one transaction,
-- so a crash leaves each file either indexed whole or not at all.
CREATE TABLE IF NOT EXISTS dateien_index (
    id           BIGSERIAL PRIMARY KEY,
    wurzel_id    BIGINT NOT NULL REFERENCES dateien_wurzeln(id) ON DELETE CASCADE,
    pfad         TEXT NOT NULL,
    inhalt_hash  TEXT NOT NULL,
    mtime        DOUBLE PRECISION NOT NULL,
    groesse      BIGINT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('ok', 'fehler', 'uebersprungen')),
    grund        TEXT NOT NULL DEFAULT '',
    parser       TEXT NOT NULL DEFAULT '',
    indiziert_am TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (wurzel_id, pfad)
);

-- A passage of a file: its text, the heading path above it (" › "-joined), its page (PDF;
-- NULL elsewhere) and the lines of the extracted text it spans (1-based, inclusive).
-- `user_id` repeats the root's owner, so a search reads one person's passages by index.
CREATE TABLE IF NOT EXISTS dateien_abschnitte (
    id           BIGSERIAL PRIMARY KEY,
    datei_id     BIGINT NOT NULL REFERENCES dateien_index(id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL,
    position     INT NOT NULL,
    inhalt       TEXT NOT NULL,
    ueberschrift TEXT NOT NULL DEFAULT '',
    seite        INT,
    zeile_von    INT NOT NULL,
    zeile_bis    INT NOT NULL,
    sprache      REGCONFIG NOT NULL DEFAULT 'simple',
    tsv          TSVECTOR GENERATED ALWAYS AS
                 (to_tsvector(sprache, ueberschrift || ' ' || inhalt)) STORED,
    embedding    vector({{EMBED_DIM}}),
    UNIQUE (datei_id, position)
);
CREATE INDEX IF NOT EXISTS dateien_abschnitte_tsv
    ON dateien_abschnitte USING gin (user_id, tsv) WITH (fastupdate = off);
CREATE INDEX IF NOT EXISTS dateien_abschnitte_user ON dateien_abschnitte (user_id);
CREATE INDEX IF NOT EXISTS dateien_abschnitte_embedding
    ON dateien_abschnitte USING hnsw (embedding vector_cosine_ops)
    WITH (m = 16, ef_construction = 64);
