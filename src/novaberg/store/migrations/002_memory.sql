-- Memory layer: indexes the promotion, spreading read and read APIs rely on.

-- Edge candidates of a new long-term node: nodes sharing a theme or an entity.
CREATE INDEX IF NOT EXISTS lzg_knoten_themen ON lzg_knoten USING gin (themen);
CREATE INDEX IF NOT EXISTS lzg_knoten_entitaeten ON lzg_knoten USING gin (entitaet_ids);

-- Spreading activation follows a node's strongest outgoing edges.
CREATE INDEX IF NOT EXISTS lzg_kanten_a_gewicht ON lzg_kanten (knoten_a_id, gewicht_absolut DESC);

-- Background job history per job, newest first (read API, scheduler diagnostics).
CREATE INDEX IF NOT EXISTS hintergrund_log_job ON hintergrund_log (job, erstellt_am DESC);
