-- The installation's model connection as set in the page's settings (docs/behaviour/web.md#model-connection):
-- one row at most; none = the environment's NOVABERG_LLM_* variables. Every API and worker
-- process follows it without a restart (a version key in Redis says when it changed).
-- `schluessel` is the server's API key, stored as given (the model server needs it as is);
-- the API never returns it.
CREATE TABLE IF NOT EXISTS modell_verbindung (
    einzig        BOOLEAN     PRIMARY KEY DEFAULT TRUE CHECK (einzig),
    url           TEXT        NOT NULL,
    modell        TEXT        NOT NULL,
    schluessel    TEXT        NOT NULL DEFAULT '',
    geaendert_von TEXT        NOT NULL,
    geaendert_am  TIMESTAMPTZ NOT NULL DEFAULT now()
);
