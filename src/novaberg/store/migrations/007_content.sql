-- Content of the CharacterGraph's post-answer nodes and the short-term entity magnets.

-- Entities (persons, places, things) named in a pair's short-term memories. A salience
-- score's `entitaeten_roh` is resolved to these ids; entries naming the same entity
-- strengthen each other (docs/behaviour/memory.md#entity-magnets).
CREATE TABLE IF NOT EXISTS entitaeten (
    id           BIGSERIAL PRIMARY KEY,
    user_id      TEXT NOT NULL,
    character_id TEXT NOT NULL,
    name         TEXT NOT NULL,
    name_norm    TEXT NOT NULL,
    erstellt_am  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (user_id, character_id, name_norm)
);

-- The imprint layer's threads: a topic that moved the character strongly enough, turn
-- after turn (docs/behaviour/nodes.md#imprint).
CREATE TABLE IF NOT EXISTS praegung_faden (
    id           BIGSERIAL PRIMARY KEY,
    user_id      TEXT NOT NULL,
    character_id TEXT NOT NULL,
    thema        TEXT NOT NULL,
    staerke      DOUBLE PRECISION NOT NULL,
    anzahl       INT NOT NULL DEFAULT 1,
    erstellt_am  TIMESTAMPTZ NOT NULL DEFAULT now(),
    zuletzt_am   TIMESTAMPTZ NOT NULL DEFAULT now(),
    letzter_turn TEXT,
    UNIQUE (user_id, character_id, thema)
);

-- One row per answered turn: were open questions offered, and did the released answer
-- take one of them up (docs/behaviour/nodes.md#uptake).
CREATE TABLE IF NOT EXISTS offene_fragen_aufgriff (
    id           BIGSERIAL PRIMARY KEY,
    turn_id      TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    character_id TEXT NOT NULL,
    angeboten    INT NOT NULL,
    aufgegriffen BOOLEAN,
    frage_id     TEXT,
    frage        TEXT,
    cosinus      DOUBLE PRECISION,
    ausfall      TEXT,
    erstellt_am  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS offene_fragen_aufgriff_paar
    ON offene_fragen_aufgriff (user_id, character_id, erstellt_am DESC);
