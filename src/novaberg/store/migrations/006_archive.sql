-- The conversation archive, lexical search over every memory layer, and imported characters.
-- Why each piece exists and how it is searched: docs/behaviour/memory.md#conversation-archive
-- and docs/behaviour/memory.md#hybrid-search; the code that keeps the invariants below is
-- store/archive.py.

-- GIN over (pair, tsvector) and (pair, lexeme trigrams): candidates of one pair only.
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- Every utterance and every answer (live, impulse, imported), kept beyond the session.
--   quelle/quell_id: where the row came from and that source's own id ("live" rows: the
--   turn, speaker and self-trigger round). UNIQUE per pair: writing a row twice (a re-run
--   turn, a re-imported file) adds nothing. Text and language are never changed (guarded
--   below), so the statistics kept by trigger stay exact.
--   sprache: the text-search configuration chosen for the text (german, english, simple).
--   embedding: the turn alone; embedding_kontext: the turn with its predecessor (the
--   normalised sum of both vectors), the second view a search ranks separately.
--   angeheftet: exempt from the yearly purge.
CREATE TABLE IF NOT EXISTS gespraechsarchiv (
    id                BIGSERIAL PRIMARY KEY,
    user_id           TEXT NOT NULL,
    character_id      TEXT NOT NULL,
    sprecher          TEXT NOT NULL CHECK (sprecher IN ('user', 'character')),
    inhalt            TEXT NOT NULL,
    zeit              TIMESTAMPTZ NOT NULL,
    turn_id           TEXT,
    nachrichten_ids   TEXT[] NOT NULL DEFAULT '{}',
    herkunft          TEXT NOT NULL,
    quelle            TEXT NOT NULL,
    quell_id          TEXT NOT NULL,
    gespraech         TEXT,
    sprache           REGCONFIG NOT NULL DEFAULT 'simple',
    tsv               TSVECTOR GENERATED ALWAYS AS (to_tsvector(sprache, inhalt)) STORED,
    embedding         vector({{EMBED_DIM}}),
    embedding_kontext vector({{EMBED_DIM}}),
    angeheftet        BOOLEAN NOT NULL DEFAULT FALSE,
    destilliert_am    TIMESTAMPTZ,
    archiviert_am     TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (user_id, character_id, quelle, quell_id)
);
CREATE INDEX IF NOT EXISTS gespraechsarchiv_zeit
    ON gespraechsarchiv (user_id, character_id, zeit);
CREATE INDEX IF NOT EXISTS gespraechsarchiv_turn ON gespraechsarchiv (turn_id);
CREATE INDEX IF NOT EXISTS gespraechsarchiv_archiviert ON gespraechsarchiv (archiviert_am)
    WHERE NOT angeheftet;
CREATE INDEX IF NOT EXISTS gespraechsarchiv_tsv
    ON gespraechsarchiv USING gin (user_id, character_id, tsv);
CREATE INDEX IF NOT EXISTS gespraechsarchiv_embedding
    ON gespraechsarchiv USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX IF NOT EXISTS gespraechsarchiv_embedding_kontext
    ON gespraechsarchiv USING hnsw (embedding_kontext vector_cosine_ops)
    WITH (m = 16, ef_construction = 64);

-- Text statistics of each pair's archive for the lexical ranking (BM25 weights):
-- archiv_paar: how many rows and lexemes in all; archiv_lexeme: in how many rows each lexeme
-- occurs. Kept by the statement triggers below, so they always equal a count over the rows.
CREATE TABLE IF NOT EXISTS archiv_paar (
    user_id      TEXT NOT NULL,
    character_id TEXT NOT NULL,
    anzahl       BIGINT NOT NULL DEFAULT 0,
    laenge       BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, character_id)
);
CREATE TABLE IF NOT EXISTS archiv_lexeme (
    user_id      TEXT NOT NULL,
    character_id TEXT NOT NULL,
    lexem        TEXT NOT NULL,
    df           BIGINT NOT NULL,
    PRIMARY KEY (user_id, character_id, lexem)
);
-- The pair's vocabulary by trigrams: a misspelt name is corrected to the lexemes it resembles
-- (thousands of words instead of every turn's text).
CREATE INDEX IF NOT EXISTS archiv_lexeme_trgm
    ON archiv_lexeme USING gin (user_id, character_id, lexem gin_trgm_ops);

CREATE OR REPLACE FUNCTION archiv_statistik() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- rows are aggregated and upserted in key order: two writers of one pair lock the
    -- statistic rows in the same order and cannot deadlock
    IF TG_OP = 'INSERT' THEN
        INSERT INTO archiv_paar AS p (user_id, character_id, anzahl, laenge)
            SELECT user_id, character_id, count(*), sum(length(tsv))
            FROM neu GROUP BY user_id, character_id ORDER BY user_id, character_id
        ON CONFLICT (user_id, character_id)
            DO UPDATE SET anzahl = p.anzahl + EXCLUDED.anzahl, laenge = p.laenge + EXCLUDED.laenge;
        INSERT INTO archiv_lexeme AS x (user_id, character_id, lexem, df)
            SELECT n.user_id, n.character_id, l.lexem, count(*)
            FROM neu n, unnest(tsvector_to_array(n.tsv)) AS l(lexem)
            GROUP BY n.user_id, n.character_id, l.lexem
            ORDER BY n.user_id, n.character_id, l.lexem
        ON CONFLICT (user_id, character_id, lexem) DO UPDATE SET df = x.df + EXCLUDED.df;
    ELSE
        UPDATE archiv_paar p SET anzahl = p.anzahl - a.n, laenge = p.laenge - a.l
        FROM (SELECT user_id, character_id, count(*) AS n, sum(length(tsv)) AS l
              FROM alt GROUP BY user_id, character_id ORDER BY user_id, character_id) a
        WHERE p.user_id = a.user_id AND p.character_id = a.character_id;
        UPDATE archiv_lexeme x SET df = x.df - weg.n
        FROM (SELECT o.user_id, o.character_id, l.lexem, count(*) AS n
              FROM alt o, unnest(tsvector_to_array(o.tsv)) AS l(lexem)
              GROUP BY o.user_id, o.character_id, l.lexem
              ORDER BY o.user_id, o.character_id, l.lexem) weg
        WHERE x.user_id = weg.user_id AND x.character_id = weg.character_id
          AND x.lexem = weg.lexem;
        -- a lexeme no row of the pair contains any more has no statistic
        DELETE FROM archiv_lexeme x
        USING (SELECT DISTINCT o.user_id, o.character_id, l.lexem
               FROM alt o, unnest(tsvector_to_array(o.tsv)) AS l(lexem)) weg
        WHERE x.df <= 0 AND x.user_id = weg.user_id AND x.character_id = weg.character_id
          AND x.lexem = weg.lexem;
    END IF;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION archiv_text_unveraenderlich() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.inhalt IS DISTINCT FROM OLD.inhalt OR NEW.sprache IS DISTINCT FROM OLD.sprache
       OR NEW.user_id IS DISTINCT FROM OLD.user_id
       OR NEW.character_id IS DISTINCT FROM OLD.character_id THEN
        RAISE EXCEPTION 'gespraechsarchiv: text, language and pair of a row never change';
    END IF;
    RETURN NEW;
END;
$$;

DROP TRIGGER IF EXISTS archiv_statistik_insert ON gespraechsarchiv;
DROP TRIGGER IF EXISTS archiv_statistik_delete ON gespraechsarchiv;
DROP TRIGGER IF EXISTS archiv_text_unveraenderlich ON gespraechsarchiv;
CREATE TRIGGER archiv_statistik_insert AFTER INSERT ON gespraechsarchiv
    REFERENCING NEW TABLE AS neu FOR EACH STATEMENT EXECUTE FUNCTION archiv_statistik();
CREATE TRIGGER archiv_statistik_delete AFTER DELETE ON gespraechsarchiv
    REFERENCING OLD TABLE AS alt FOR EACH STATEMENT EXECUTE FUNCTION archiv_statistik();
CREATE TRIGGER archiv_text_unveraenderlich BEFORE UPDATE ON gespraechsarchiv
    FOR EACH ROW EXECUTE FUNCTION archiv_text_unveraenderlich();

-- Long-term nodes become searchable by words too. Existing nodes were condensed by the
-- German prompt: they get the German configuration; new ones the detected language.
ALTER TABLE lzg_knoten ADD COLUMN IF NOT EXISTS sprache REGCONFIG NOT NULL DEFAULT 'german';
ALTER TABLE lzg_knoten ALTER COLUMN sprache SET DEFAULT 'simple';
ALTER TABLE lzg_knoten ADD COLUMN IF NOT EXISTS tsv TSVECTOR
    GENERATED ALWAYS AS (to_tsvector(sprache, inhalt)) STORED;
CREATE INDEX IF NOT EXISTS lzg_knoten_tsv ON lzg_knoten USING gin (user_id, character_id, tsv);

-- Provenance of a short-term entry: the turn it was condensed from.
CREATE INDEX IF NOT EXISTS verbindung_turn ON verbindung (turn_id);
CREATE INDEX IF NOT EXISTS lzg_befoerderung_knoten ON lzg_befoerderung (lzg_id);

-- Characters imported from a character card (V1/V2/V3): the card's fields, the card itself
-- and its hash (a second import of the same card changes nothing).
ALTER TABLE characters ADD COLUMN IF NOT EXISTS persoenlichkeit TEXT NOT NULL DEFAULT '';
ALTER TABLE characters ADD COLUMN IF NOT EXISTS szenario TEXT NOT NULL DEFAULT '';
ALTER TABLE characters ADD COLUMN IF NOT EXISTS erste_nachricht TEXT NOT NULL DEFAULT '';
ALTER TABLE characters ADD COLUMN IF NOT EXISTS beispiel_dialog TEXT NOT NULL DEFAULT '';
ALTER TABLE characters ADD COLUMN IF NOT EXISTS karte JSONB;
ALTER TABLE characters ADD COLUMN IF NOT EXISTS karten_hash TEXT;
