-- The shadow queue: tasks Nova set herself (look something up, ask how it went, bring a
-- resubmission back). One row per (user, character, task, topic); pushing the same task
-- again reinforces the row instead of adding one (store/shadow_queue.py).
CREATE TABLE IF NOT EXISTS shadow_auftrag (
    id              BIGSERIAL PRIMARY KEY,
    user_id         TEXT NOT NULL,
    character_id    TEXT NOT NULL,
    beobachter      TEXT NOT NULL DEFAULT 'assistant',
    aufgabe         TEXT NOT NULL,
    thema           TEXT NOT NULL,
    kontext         TEXT NOT NULL DEFAULT '',
    grund           TEXT NOT NULL DEFAULT '',
    intentionen     TEXT[] NOT NULL DEFAULT '{}',
    emotion         TEXT,
    modus           TEXT,
    arousal         REAL,
    bezug_id        TEXT,
    salienz_roh     REAL NOT NULL,
    salienz_absolut REAL NOT NULL,
    salienz_decay   REAL NOT NULL,
    haeufigkeit     INTEGER NOT NULL DEFAULT 1,
    aktiv           BOOLEAN NOT NULL DEFAULT TRUE,
    erstellt_am     TIMESTAMPTZ NOT NULL DEFAULT now(),
    verstaerkt_am   TIMESTAMPTZ NOT NULL DEFAULT now(),
    decay_am        TIMESTAMPTZ NOT NULL DEFAULT now(),
    versuche        INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT shadow_auftrag_identitaet UNIQUE (user_id, character_id, aufgabe, thema)
);
CREATE INDEX IF NOT EXISTS shadow_auftrag_beste
    ON shadow_auftrag (aufgabe, salienz_decay DESC) WHERE aktiv;

-- What a person decided about Nova's impulses, per user and character. No row = the
-- defaults (on, NOVABERG_QUIET_HOURS, 3 a day, NOVABERG_TIMEZONE).
CREATE TABLE IF NOT EXISTS impuls_einstellungen (
    user_id       TEXT NOT NULL,
    character_id  TEXT NOT NULL,
    impulse       BOOLEAN,
    ruhezeit      TEXT,
    zeitzone      TEXT,
    pro_tag       INTEGER,
    geaendert_am  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, character_id)
);

-- Every delivery check: which gates held or passed with their values, and what fired.
CREATE TABLE IF NOT EXISTS impuls_protokoll (
    id            BIGSERIAL PRIMARY KEY,
    erstellt_am   TIMESTAMPTZ NOT NULL,
    user_id       TEXT NOT NULL,
    character_id  TEXT NOT NULL,
    ergebnis      TEXT NOT NULL,
    grund         TEXT NOT NULL,
    eintrag_id    TEXT,
    turn_id       TEXT,
    tore          JSONB NOT NULL
);
CREATE INDEX IF NOT EXISTS impuls_protokoll_paar
    ON impuls_protokoll (user_id, character_id, erstellt_am DESC);
