-- The case file of what Nova took on for the person (docs/behaviour/agents.md#delegation):
-- one row per matter and turn, opened by the research or the delegation agent.
-- art: 'recherche' (something to look up) | 'delegation' (a matter to take care of)
-- anlass: 'zusage' (Nova promised it in her answer) | 'auftrag' (the person asked for it)
-- status: 'erledigt' (answered at once) | 'an_pixie' (handed to a background task,
--   shadow_auftrag_id) | 'offen' (taken on, nothing to hand on yet)
CREATE TABLE IF NOT EXISTS delegation (
    id                BIGSERIAL PRIMARY KEY,
    user_id           TEXT NOT NULL,
    character_id      TEXT NOT NULL,
    art               TEXT NOT NULL CHECK (art IN ('recherche', 'delegation')),
    anlass            TEXT NOT NULL CHECK (anlass IN ('zusage', 'auftrag')),
    anliegen          TEXT NOT NULL,
    thema             TEXT NOT NULL DEFAULT '',
    bezug_turn_id     TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('offen', 'erledigt', 'an_pixie')),
    befund            TEXT NOT NULL DEFAULT '',
    quellen           JSONB NOT NULL DEFAULT '[]',
    shadow_auftrag_id BIGINT,
    erstellt_am       TIMESTAMPTZ NOT NULL,
    geaendert_am      TIMESTAMPTZ NOT NULL,
    UNIQUE (user_id, character_id, art, bezug_turn_id)
);
CREATE INDEX IF NOT EXISTS delegation_pair
    ON delegation (user_id, character_id, erstellt_am DESC);
