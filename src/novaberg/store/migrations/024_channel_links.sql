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
