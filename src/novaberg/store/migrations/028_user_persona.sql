-- How a person wants the characters to know them (docs/behaviour/web.md#your-persona): a
-- name and a short description, one row per user, no row while unset. The prompts name and
-- describe the person with it; without a row they say "der Nutzer" as before.
CREATE TABLE IF NOT EXISTS nutzer_persona (
    user_id      TEXT        PRIMARY KEY REFERENCES users(user_id) ON DELETE CASCADE,
    name         TEXT        NOT NULL DEFAULT '',
    beschreibung TEXT        NOT NULL DEFAULT '',
    geaendert_am TIMESTAMPTZ NOT NULL DEFAULT now()
);
