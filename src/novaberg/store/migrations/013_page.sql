-- The chat page: the conversation history also holds the failed turns of a pair
-- (`art = 'turn_gescheitert'`, kept forever like `turn_roh`), and an imported card's picture
-- is the character's avatar (a PNG without the card's text chunks).
DROP INDEX IF EXISTS pipeline_log_verlauf;
CREATE INDEX IF NOT EXISTS pipeline_log_verlauf_gesamt
    ON pipeline_log (user_id, character_id, id) WHERE art IN ('turn_roh', 'turn_gescheitert');

ALTER TABLE characters ADD COLUMN IF NOT EXISTS avatar BYTEA;
ALTER TABLE characters ADD COLUMN IF NOT EXISTS avatar_typ TEXT;
