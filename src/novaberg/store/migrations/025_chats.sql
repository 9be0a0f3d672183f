-- A pair's chats (docs/behaviour/web.md#chats): conversation threads the person opened with
-- one character. Her memory stays one per pair; a chat only groups the pair's history rows
-- (`pipeline_log` `turn_roh`/`turn_gescheitert`). `titel` is the person's name for it (NULL:
-- the first words of its first message); a deleted chat keeps its row with `geloescht_am`,
-- so its history rows stay its own and never fall into a neighbour.
CREATE TABLE IF NOT EXISTS chats (
    id           TEXT        PRIMARY KEY,
    user_id      TEXT        NOT NULL,
    character_id TEXT        NOT NULL,
    titel        TEXT,
    erstellt_am  TIMESTAMPTZ NOT NULL DEFAULT now(),
    geloescht_am TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS chats_pair ON chats (user_id, character_id);

-- Which chat the pair's history rows belong to: each opening of a chat starts a span at the
-- next `pipeline_log` id; a row belongs to the span with the largest `ab_id` not above its
-- id. The pair's first chat starts at 0 and so holds everything written before chats
-- existed. The newest span is the pair's current chat, where new turns go.
CREATE TABLE IF NOT EXISTS chat_abschnitte (
    user_id      TEXT        NOT NULL,
    character_id TEXT        NOT NULL,
    ab_id        BIGINT      NOT NULL,
    chat_id      TEXT        NOT NULL REFERENCES chats (id),
    geoeffnet_am TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, character_id, ab_id)
);
