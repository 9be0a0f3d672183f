-- The situation's objects, kept beyond the 4 h bubble (`sachlage:{u}:{c}`): every object a
-- computed turn understood, the turns it appeared in, and its property values with their
-- history (docs/behaviour/memory.md#situation-objects).

-- One row per object of a pair, by normalised name. `entitaet_id` binds it to the entity
-- the pair's memories name it by (docs/behaviour/memory.md#entity-magnets); once bound it
-- stays bound.
CREATE TABLE IF NOT EXISTS sachlage_objekt (
    id              BIGSERIAL PRIMARY KEY,
    user_id         TEXT        NOT NULL,
    character_id    TEXT        NOT NULL,
    name            TEXT        NOT NULL,
    name_norm       TEXT        NOT NULL,
    entitaet_id     BIGINT      REFERENCES entitaeten (id) ON DELETE SET NULL,
    erstellt_am     TIMESTAMPTZ NOT NULL DEFAULT now(),
    zuletzt_am      TIMESTAMPTZ NOT NULL DEFAULT now(),
    zuletzt_turn_id TEXT        NOT NULL DEFAULT '',
    UNIQUE (user_id, character_id, name_norm)
);
CREATE INDEX IF NOT EXISTS sachlage_objekt_zuletzt
    ON sachlage_objekt (user_id, character_id, zuletzt_am DESC);

-- Which turn understood which object, and how: the object the utterance was about
-- (`bezug`), named in it (`akut`), and what was still open about it.
CREATE TABLE IF NOT EXISTS sachlage_objekt_turn (
    objekt_id   BIGINT      NOT NULL REFERENCES sachlage_objekt (id) ON DELETE CASCADE,
    turn_id     TEXT        NOT NULL,
    bezug       BOOLEAN     NOT NULL DEFAULT false,
    akut        BOOLEAN     NOT NULL DEFAULT false,
    offen       TEXT[]      NOT NULL DEFAULT '{}',
    erstellt_am TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (objekt_id, turn_id)
);

-- An object's property values. A new value supersedes the current one (`abgeloest_am`,
-- `abgeloest_von_turn` set; the row is kept as history); the same value again changes
-- nothing. At most one current value per property.
CREATE TABLE IF NOT EXISTS sachlage_eigenschaft (
    id                 BIGSERIAL PRIMARY KEY,
    objekt_id          BIGINT      NOT NULL REFERENCES sachlage_objekt (id) ON DELETE CASCADE,
    eigenschaft        TEXT        NOT NULL,
    wert               TEXT        NOT NULL,
    turn_id            TEXT        NOT NULL,
    gesetzt_am         TIMESTAMPTZ NOT NULL DEFAULT now(),
    abgeloest_am       TIMESTAMPTZ,
    abgeloest_von_turn TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS sachlage_eigenschaft_aktuell
    ON sachlage_eigenschaft (objekt_id, eigenschaft) WHERE abgeloest_am IS NULL;
