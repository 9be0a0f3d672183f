-- How many active long-term nodes each pair has, kept current by statement triggers.
--
-- The planner cannot see that one pair is small next to a big one: at 100 000 nodes it
-- served a 2 000-node pair through HNSW, where the filtered iterative scan stopped at
-- hnsw.max_scan_tuples with recall@10 0.70 (bench/memory.py). store/lzg.nearest reads
-- this count (a primary-key lookup) and ranks a small pair exactly instead.
-- Statement-level triggers with transition tables: a COPY of 50 000 rows costs one
-- aggregated update, not 50 000 updates of the same counter row.
CREATE TABLE IF NOT EXISTS lzg_paar_groesse (
    user_id      TEXT NOT NULL,
    character_id TEXT NOT NULL,
    aktive       BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, character_id)
);

INSERT INTO lzg_paar_groesse (user_id, character_id, aktive)
    SELECT user_id, character_id, count(*) FILTER (WHERE aktiv)
    FROM lzg_knoten GROUP BY user_id, character_id
ON CONFLICT (user_id, character_id) DO UPDATE SET aktive = EXCLUDED.aktive;

CREATE OR REPLACE FUNCTION lzg_paar_groesse_zaehlen() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO lzg_paar_groesse AS g (user_id, character_id, aktive)
            SELECT user_id, character_id, count(*) FILTER (WHERE aktiv)
            FROM neu GROUP BY user_id, character_id
        ON CONFLICT (user_id, character_id) DO UPDATE SET aktive = g.aktive + EXCLUDED.aktive;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE lzg_paar_groesse g SET aktive = g.aktive - a.n
        FROM (SELECT user_id, character_id, count(*) FILTER (WHERE aktiv) AS n
              FROM alt GROUP BY user_id, character_id) a
        WHERE g.user_id = a.user_id AND g.character_id = a.character_id;
    END IF;
    RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS lzg_paar_groesse_insert ON lzg_knoten;
DROP TRIGGER IF EXISTS lzg_paar_groesse_update ON lzg_knoten;
DROP TRIGGER IF EXISTS lzg_paar_groesse_delete ON lzg_knoten;
CREATE TRIGGER lzg_paar_groesse_insert AFTER INSERT ON lzg_knoten
    REFERENCING NEW TABLE AS neu FOR EACH STATEMENT EXECUTE FUNCTION lzg_paar_groesse_zaehlen();
CREATE TRIGGER lzg_paar_groesse_update AFTER UPDATE ON lzg_knoten
    REFERENCING OLD TABLE AS alt NEW TABLE AS neu
    FOR EACH STATEMENT EXECUTE FUNCTION lzg_paar_groesse_zaehlen();
CREATE TRIGGER lzg_paar_groesse_delete AFTER DELETE ON lzg_knoten
    REFERENCING OLD TABLE AS alt FOR EACH STATEMENT EXECUTE FUNCTION lzg_paar_groesse_zaehlen();
