-- Text statistics of each person's library for its word list (BM25 weights, as the archive
-- keeps them: migration 006): bibliothek_person: how many passages and lexemes in all;
-- bibliothek_lexeme: in how many passages each lexeme occurs. Kept by the statement
-- triggers below (also for passages deleted with their file or root, by cascade), so they
-- always equal a count over dateien_abschnitte. The search reads them to skip lexemes in
-- nearly every passage when it selects candidates (docs/behaviour/library.md#search).
CREATE TABLE IF NOT EXISTS bibliothek_person (
    user_id TEXT PRIMARY KEY,
    anzahl  BIGINT NOT NULL DEFAULT 0,
    laenge  BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS bibliothek_lexeme (
    user_id TEXT NOT NULL,
    lexem   TEXT NOT NULL,
    df      BIGINT NOT NULL,
    PRIMARY KEY (user_id, lexem)
);

CREATE OR REPLACE FUNCTION bibliothek_statistik() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- an update counts as its old rows going and its new rows coming; aggregated and
    -- upserted in key order, so two indexing passes of one person cannot deadlock
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE bibliothek_person p SET anzahl = p.anzahl - a.n, laenge = p.laenge - a.l
        FROM (SELECT user_id, count(*) AS n, sum(length(tsv)) AS l
              FROM alt GROUP BY user_id ORDER BY user_id) a
        WHERE p.user_id = a.user_id;
        UPDATE bibliothek_lexeme x SET df = x.df - weg.n
        FROM (SELECT o.user_id, l.lexem, count(*) AS n
              FROM alt o, unnest(tsvector_to_array(o.tsv)) AS l(lexem)
              GROUP BY o.user_id, l.lexem ORDER BY o.user_id, l.lexem) weg
        WHERE x.user_id = weg.user_id AND x.lexem = weg.lexem;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO bibliothek_person AS p (user_id, anzahl, laenge)
            SELECT user_id, count(*), sum(length(tsv))
            FROM neu GROUP BY user_id ORDER BY user_id
        ON CONFLICT (user_id)
            DO UPDATE SET anzahl = p.anzahl + EXCLUDED.anzahl, laenge = p.laenge + EXCLUDED.laenge;
        INSERT INTO bibliothek_lexeme AS x (user_id, lexem, df)
            SELECT n.user_id, l.lexem, count(*)
            FROM neu n, unnest(tsvector_to_array(n.tsv)) AS l(lexem)
            GROUP BY n.user_id, l.lexem ORDER BY n.user_id, l.lexem
        ON CONFLICT (user_id, lexem) DO UPDATE SET df = x.df + EXCLUDED.df;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        -- a lexeme no passage of the person contains any more has no statistic
        DELETE FROM bibliothek_lexeme x
        USING (SELECT DISTINCT o.user_id, l.lexem
               FROM alt o, unnest(tsvector_to_array(o.tsv)) AS l(lexem)) weg
        WHERE x.df <= 0 AND x.user_id = weg.user_id AND x.lexem = weg.lexem;
    END IF;
    RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS bibliothek_statistik_insert ON dateien_abschnitte;
DROP TRIGGER IF EXISTS bibliothek_statistik_delete ON dateien_abschnitte;
DROP TRIGGER IF EXISTS bibliothek_statistik_update ON dateien_abschnitte;
CREATE TRIGGER bibliothek_statistik_insert AFTER INSERT ON dateien_abschnitte
    REFERENCING NEW TABLE AS neu FOR EACH STATEMENT EXECUTE FUNCTION bibliothek_statistik();
CREATE TRIGGER bibliothek_statistik_delete AFTER DELETE ON dateien_abschnitte
    REFERENCING OLD TABLE AS alt FOR EACH STATEMENT EXECUTE FUNCTION bibliothek_statistik();
CREATE TRIGGER bibliothek_statistik_update AFTER UPDATE ON dateien_abschnitte
    REFERENCING OLD TABLE AS alt NEW TABLE AS neu
    FOR EACH STATEMENT EXECUTE FUNCTION bibliothek_statistik();

-- the passages indexed before this migration, counted once
DELETE FROM bibliothek_person;
DELETE FROM bibliothek_lexeme;
INSERT INTO bibliothek_person (user_id, anzahl, laenge)
    SELECT user_id, count(*), sum(length(tsv)) FROM dateien_abschnitte GROUP BY user_id;
INSERT INTO bibliothek_lexeme (user_id, lexem, df)
    SELECT c.user_id, l.lexem, count(*)
    FROM dateien_abschnitte c, unnest(tsvector_to_array(c.tsv)) AS l(lexem)
    GROUP BY c.user_id, l.lexem;
