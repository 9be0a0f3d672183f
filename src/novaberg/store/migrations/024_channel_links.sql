-- A person's other channels (docs/behaviour/reach.md): a Telegram chat linked to a Novaberg
-- user with a one-time code. One chat belongs to one user; a user may link several chats.
-- `character_id` is who the chat talks to (/character changes it). A channel that failed
-- permanently (the bot was blocked: 403) gets `gestoert_am` and its reason and is not used
-- again until the person links it anew.
CREATE TABLE IF NOT EXISTS kanal_verknuepfung (
    id           BIGSERIAL   PRIMARY KEY,
    user_id      TEXT        NOT NULL,
    art          TEXT        NOT NULL,
    ziel         TEXT        NOT NULL,
    character_id TEXT        NOT NULL,
    erstellt_am  TIMESTAMPTZ NOT NULL DEFAULT now(),
    gestoert_am  TIMESTAMPTZ,
    stoerung     TEXT,
    UNIQUE (art, ziel)
);
CREATE INDEX IF NOT EXISTS kanal_verknuepfung_user ON kanal_verknuepfung (user_id);

-- What each of a person's channel kinds gets besides the answers to its own messages
-- (docs/behaviour/reach.md#settings): answers to the page, impulses and follow-ups,
-- reminders. Per person and kind, whatever the character; no row = everything.
CREATE TABLE IF NOT EXISTS kanal_einstellungen (
    user_id      TEXT        NOT NULL,
    art          TEXT        NOT NULL,
    antworten    BOOLEAN     NOT NULL DEFAULT TRUE,
    impulse      BOOLEAN     NOT NULL DEFAULT TRUE,
    erinnerungen BOOLEAN     NOT NULL DEFAULT TRUE,
    geaendert_am TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, art)
);
