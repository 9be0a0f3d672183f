-- A character can be paused and activated again, per person: `aktiv` false means this user's
-- messages to this character are stored (session, short-term memory) but not answered until
-- the character is activated again (docs/behaviour/events.md#paused-characters). A pair
-- without a row is active. Per user, not per character: a built-in character is shared, and
-- one person pausing Nova must not silence her for anybody else.
CREATE TABLE IF NOT EXISTS charakter_aktivierung (
    user_id      TEXT        NOT NULL,
    character_id TEXT        NOT NULL,
    aktiv        BOOLEAN     NOT NULL,
    geaendert_am TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, character_id)
);
