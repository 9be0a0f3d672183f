-- Core schema. Table and column names are stored data and keep their German names.
-- {{EMBED_DIM}} is replaced by the migration runner with NOVABERG_EMBED_DIM.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- People who may talk to characters, and their API tokens (stored as SHA-256).
CREATE TABLE IF NOT EXISTS users (
    user_id      TEXT PRIMARY KEY,
    display_name TEXT NOT NULL DEFAULT '',
    erstellt_am  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS api_tokens (
    token_hash   TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    label        TEXT NOT NULL DEFAULT '',
    erstellt_am  TIMESTAMPTZ NOT NULL DEFAULT now(),
    zuletzt_am   TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS api_tokens_user ON api_tokens(user_id);

-- Characters a person can talk to (default: nova).
CREATE TABLE IF NOT EXISTS characters (
    character_id  TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    beschreibung  TEXT NOT NULL DEFAULT '',
    system_prompt TEXT NOT NULL DEFAULT '',
    erstellt_am   TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO characters (character_id, name, beschreibung)
VALUES ('nova', 'Nova', 'Eine warmherzige, neugierige Begleiterin.')
ON CONFLICT (character_id) DO NOTHING;

-- Distilled personality profiles. Row (user, character) = the person as the
-- character sees them; row (character, user) = the character's own profile.
CREATE TABLE IF NOT EXISTS charakter_hash (
    user_id                        TEXT NOT NULL,
    character_id                   TEXT NOT NULL,
    kern_hash                      TEXT NOT NULL DEFAULT '',
    kern_hash_aktualisiert_am      TIMESTAMPTZ,
    adaptive_hash                  TEXT NOT NULL DEFAULT '',
    adaptive_hash_aktualisiert_am  TIMESTAMPTZ,
    intentions_profil              TEXT NOT NULL DEFAULT '',
    intentions_profil_aktualisiert_am TIMESTAMPTZ,
    emotions_profil                TEXT NOT NULL DEFAULT '',
    emotions_profil_aktualisiert_am TIMESTAMPTZ,
    beziehungsprofil               TEXT NOT NULL DEFAULT '',
    beziehungsprofil_aktualisiert_am TIMESTAMPTZ,
    nutzer_gewichtung              DOUBLE PRECISION NOT NULL DEFAULT 0.9,
    nutzer_gewichtung_quelle       TEXT NOT NULL DEFAULT '',
    nutzer_gewichtung_rad          JSONB,
    nutzer_gewichtung_am           TIMESTAMPTZ,
    initiative_versatz             DOUBLE PRECISION,
    initiative_versatz_quelle      TEXT NOT NULL DEFAULT '',
    initiative_versatz_rad         JSONB,
    initiative_versatz_am          TIMESTAMPTZ,
    PRIMARY KEY (user_id, character_id)
);

-- Character instructions given by the user ("who Nova is"), keyed by the human.
CREATE TABLE IF NOT EXISTS charakter_anweisungen (
    id           SERIAL PRIMARY KEY,
    user_id      TEXT NOT NULL,
    anweisung    TEXT NOT NULL,
    erstellt_am  TIMESTAMPTZ NOT NULL DEFAULT now(),
    aktiv        BOOLEAN NOT NULL DEFAULT TRUE,
    geaendert_am TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS charakter_anweisungen_user ON charakter_anweisungen(user_id, aktiv);

-- Lasting behaviour rules the user gave the character.
CREATE TABLE IF NOT EXISTS direktiven (
    id           SERIAL PRIMARY KEY,
    user_id      TEXT NOT NULL,
    anweisung    TEXT NOT NULL,
    kontext      TEXT,
    erstellt_am  TIMESTAMPTZ NOT NULL DEFAULT now(),
    aktiv        BOOLEAN NOT NULL DEFAULT TRUE,
    geaendert_am TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS direktiven_user ON direktiven(user_id, aktiv);

-- Appointments, birthdays, deadlines (bi-temporal: a change deactivates the old row).
CREATE TABLE IF NOT EXISTS timeline (
    id               SERIAL PRIMARY KEY,
    user_id          TEXT NOT NULL,
    event_time       TIMESTAMPTZ NOT NULL,
    event_ende       TIMESTAMPTZ,
    event_type       VARCHAR(50) NOT NULL DEFAULT 'termin',
    title            VARCHAR(255) NOT NULL,
    details          TEXT NOT NULL DEFAULT '',
    recurring        BOOLEAN NOT NULL DEFAULT FALSE,
    precision        VARCHAR(15) NOT NULL DEFAULT 'day',
    binding          BOOLEAN NOT NULL DEFAULT FALSE,
    remind           BOOLEAN NOT NULL DEFAULT FALSE,
    conflict_check   BOOLEAN NOT NULL DEFAULT FALSE,
    erinnert_am      TIMESTAMPTZ,
    themen           TEXT[] NOT NULL DEFAULT '{}',
    entitaet_ids     INT[] NOT NULL DEFAULT '{}',
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    aktiv            BOOLEAN NOT NULL DEFAULT TRUE,
    last_touched     TIMESTAMPTZ NOT NULL DEFAULT now(),
    wiedervorlage_am TIMESTAMPTZ,
    vorgaenger_id    INT REFERENCES timeline(id)
);
CREATE INDEX IF NOT EXISTS timeline_user_time ON timeline(user_id, aktiv, event_time);

-- Lists, memos, shopping lists.
CREATE TABLE IF NOT EXISTS notizen (
    id               SERIAL PRIMARY KEY,
    user_id          TEXT NOT NULL,
    name             TEXT NOT NULL,
    typ              TEXT NOT NULL DEFAULT 'notiz',
    text             TEXT NOT NULL DEFAULT '',
    faellig_am       TIMESTAMPTZ,
    status           TEXT NOT NULL DEFAULT 'aktiv',
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    zusammenfassung  VARCHAR(200) NOT NULL DEFAULT '',
    themen           TEXT[] NOT NULL DEFAULT '{}',
    entitaet_ids     INT[] NOT NULL DEFAULT '{}',
    aktiv            BOOLEAN NOT NULL DEFAULT TRUE,
    last_touched     TIMESTAMPTZ NOT NULL DEFAULT now(),
    wiedervorlage_am TIMESTAMPTZ,
    timeline_id      INT REFERENCES timeline(id)
);
CREATE INDEX IF NOT EXISTS notizen_user ON notizen(user_id, aktiv);
CREATE INDEX IF NOT EXISTS notizen_name_trgm ON notizen USING gin (lower(name) gin_trgm_ops);

-- Long-term memory: nodes and directed edges ("synapses").
CREATE TABLE IF NOT EXISTS lzg_knoten (
    id                 BIGSERIAL PRIMARY KEY,
    kzg_quell_key      TEXT UNIQUE,
    user_id            TEXT NOT NULL,
    character_id       TEXT NOT NULL,
    beobachter         TEXT NOT NULL DEFAULT 'user',
    inhalt             TEXT NOT NULL,
    embedding          vector({{EMBED_DIM}}) NOT NULL,
    dimension          TEXT NOT NULL DEFAULT 'kontext',
    gewicht_roh        DOUBLE PRECISION NOT NULL,
    gewicht_absolut    DOUBLE PRECISION NOT NULL,
    gewicht_decay      DOUBLE PRECISION NOT NULL,
    haeufigkeit        INT NOT NULL DEFAULT 1,
    abrufe             INT NOT NULL DEFAULT 0,
    aktiv              BOOLEAN NOT NULL DEFAULT TRUE,
    erstellt_am        TIMESTAMPTZ NOT NULL DEFAULT now(),
    verstaerkt_am      TIMESTAMPTZ NOT NULL DEFAULT now(),
    abgerufen_am       TIMESTAMPTZ,
    decay_am           TIMESTAMPTZ,
    kzg_erstellt_am    TIMESTAMPTZ,
    themen             TEXT[] NOT NULL DEFAULT '{}',
    gedaechtnistyp     TEXT NOT NULL DEFAULT 'kurz',
    entitaet_ids       INT[] NOT NULL DEFAULT '{}',
    timeline_id        INT REFERENCES timeline(id) ON DELETE SET NULL,
    emotion            TEXT NOT NULL DEFAULT '',
    arousal            DOUBLE PRECISION,
    emotions_vektor    TEXT NOT NULL DEFAULT '',
    intentionen        TEXT NOT NULL DEFAULT '[]',
    modus              TEXT NOT NULL DEFAULT '',
    sprach_stil        TEXT NOT NULL DEFAULT '',
    beziehungs_dynamik TEXT NOT NULL DEFAULT '',
    tone               TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS lzg_knoten_pair ON lzg_knoten(user_id, character_id, aktiv);
CREATE INDEX IF NOT EXISTS lzg_knoten_embedding ON lzg_knoten
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);

CREATE TABLE IF NOT EXISTS lzg_kanten (
    id                       BIGSERIAL PRIMARY KEY,
    knoten_a_id              BIGINT NOT NULL REFERENCES lzg_knoten(id) ON DELETE CASCADE,
    knoten_b_id              BIGINT NOT NULL REFERENCES lzg_knoten(id) ON DELETE CASCADE,
    gewicht_roh              DOUBLE PRECISION NOT NULL,
    gewicht_absolut          DOUBLE PRECISION NOT NULL,
    erstellt_am              TIMESTAMPTZ NOT NULL DEFAULT now(),
    verbindungs_gruende      TEXT[] NOT NULL DEFAULT '{}',
    geteilte_entitaet_ids    INT[] NOT NULL DEFAULT '{}',
    geteilte_themen          TEXT[] NOT NULL DEFAULT '{}',
    timeline_naehe_tage      DOUBLE PRECISION,
    embedding_cosine_initial DOUBLE PRECISION,
    anzahl_schichten         INT NOT NULL DEFAULT 1,
    CHECK (knoten_a_id <> knoten_b_id),
    UNIQUE (knoten_a_id, knoten_b_id)
);
CREATE INDEX IF NOT EXISTS lzg_kanten_b ON lzg_kanten(knoten_b_id);

-- Which turn produced which short-term entry and which long-term node.
CREATE TABLE IF NOT EXISTS verbindung (
    id          BIGSERIAL PRIMARY KEY,
    turn_id     TEXT,
    kzg_id      TEXT NOT NULL,
    lzg_id      BIGINT REFERENCES lzg_knoten(id) ON DELETE SET NULL,
    erstellt_am TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS verbindung_kzg ON verbindung(kzg_id);

-- Goals (drive): the character's goals toward a counterpart.
CREATE TABLE IF NOT EXISTS ziele (
    id                SERIAL PRIMARY KEY,
    user_id           TEXT NOT NULL DEFAULT 'nova',
    character_id      TEXT NOT NULL,
    ziel_typ          TEXT NOT NULL DEFAULT 'mittelfristig',
    zielsatz          TEXT NOT NULL,
    thema             TEXT NOT NULL DEFAULT '',
    motivation        DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    motivation_basis  DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    motivation_basis_am TIMESTAMPTZ NOT NULL DEFAULT now(),
    emotion           TEXT NOT NULL DEFAULT '',
    arousal           DOUBLE PRECISION,
    embedding         vector({{EMBED_DIM}}),
    aktiv             BOOLEAN NOT NULL DEFAULT TRUE,
    erstellt_am       TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS ziele_pair ON ziele(user_id, character_id, aktiv);

-- Every PendingWrite a graph produced, and what became of it.
CREATE TABLE IF NOT EXISTS pending_writes_log (
    id           BIGSERIAL PRIMARY KEY,
    erstellt_am  TIMESTAMPTZ NOT NULL DEFAULT now(),
    turn_id      TEXT,
    user_id      TEXT NOT NULL,
    character_id TEXT NOT NULL,
    quelle       TEXT NOT NULL,
    ziel         TEXT NOT NULL,
    aktion       TEXT NOT NULL,
    daten        JSONB NOT NULL,
    beschreibung TEXT NOT NULL DEFAULT '',
    ergebnis     TEXT NOT NULL DEFAULT 'offen'
);
CREATE INDEX IF NOT EXISTS pending_writes_log_turn ON pending_writes_log(turn_id);

-- Forensics: one row per node run (and other notable events) of every graph.
CREATE TABLE IF NOT EXISTS pipeline_log (
    id             BIGSERIAL PRIMARY KEY,
    erstellt_am    TIMESTAMPTZ NOT NULL DEFAULT now(),
    turn_id        TEXT,
    span_id        UUID,
    quelle         TEXT NOT NULL,
    node           TEXT NOT NULL,
    art            TEXT NOT NULL,
    dauer_ms       DOUBLE PRECISION,
    modell_aufrufe INT NOT NULL DEFAULT 0,
    ergebnis       TEXT NOT NULL DEFAULT 'ok',
    inhalt         JSONB NOT NULL DEFAULT '{}'::jsonb,
    user_id        TEXT,
    character_id   TEXT
);
CREATE INDEX IF NOT EXISTS pipeline_log_turn ON pipeline_log(turn_id);
CREATE INDEX IF NOT EXISTS pipeline_log_time ON pipeline_log(erstellt_am);

-- Background job history (Pixie).
CREATE TABLE IF NOT EXISTS hintergrund_log (
    id          BIGSERIAL PRIMARY KEY,
    erstellt_am TIMESTAMPTZ NOT NULL DEFAULT now(),
    job         TEXT NOT NULL,
    user_id     TEXT,
    ergebnis    TEXT NOT NULL,
    dauer_ms    DOUBLE PRECISION,
    detail      JSONB NOT NULL DEFAULT '{}'::jsonb
);
