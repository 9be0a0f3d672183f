-- Learnt phrasings: a word a person uses for an agent's action, counted over the tasks the
-- agent carried out; once used often enough it is an independent check of the agent's
-- classification (docs/behaviour/agents.md#learnt-phrasings). Bounded per user (a cap,
-- least recently used out first) and forgotten when unused (zuletzt_am too old).
CREATE TABLE IF NOT EXISTS verb_mappings (
    id          BIGSERIAL PRIMARY KEY,
    user_id     TEXT NOT NULL,
    agent       TEXT NOT NULL,
    ausdruck    TEXT NOT NULL,
    aktion      TEXT NOT NULL,
    konfidenz   INT NOT NULL DEFAULT 1,
    erstellt_am TIMESTAMPTZ NOT NULL DEFAULT now(),
    zuletzt_am  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (user_id, agent, ausdruck, aktion)
);
CREATE INDEX IF NOT EXISTS verb_mappings_user ON verb_mappings (user_id, agent, zuletzt_am);
