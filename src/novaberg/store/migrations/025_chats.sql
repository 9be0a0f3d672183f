-- A pair's chats (docs/behaviour/web.md#chats): conversation threads the person opened with
-- one character. Her memory stays one per pair; a chat only groups the pair's history rows
-- (`pipeline_log` `turn_roh`/`turn_gescheitert`) by when their turn began. `titel` is the person's name for it (NULL:
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

-- When each chat was open: opening a chat starts a span at `ab`; a history row belongs to
-- the span with the latest `ab` not after its turn began (the message's `empfangen_am`, else
-- the row's `erstellt_am`). The pair's first chat starts at -infinity and so holds
-- everything said before chats existed. The newest span is the open chat, where new turns go.
CREATE TABLE IF NOT EXISTS chat_abschnitte (
    user_id      TEXT        NOT NULL,
    character_id TEXT        NOT NULL,
    ab           TIMESTAMPTZ NOT NULL,
    chat_id      TEXT        NOT NULL REFERENCES chats (id),
    PRIMARY KEY (user_id, character_id, ab)
);
