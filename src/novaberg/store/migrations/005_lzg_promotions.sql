-- Every short-term key that was carried into the long-term memory, written in the same
-- transaction as the node it created, reinforced or reactivated. A promotion job that
-- runs again (its worker died after the commit, before the job left the work queue)
-- finds its key here and changes nothing: a node is never reinforced twice for one key.
CREATE TABLE IF NOT EXISTS lzg_befoerderung (
    kzg_key       TEXT PRIMARY KEY,
    lzg_id        BIGINT NOT NULL,
    aktion        TEXT NOT NULL,
    befoerdert_am TIMESTAMPTZ NOT NULL DEFAULT now()
);
