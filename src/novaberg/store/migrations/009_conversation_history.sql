-- The conversation history the chat page pages backwards through: the answered turns
-- (`art = 'turn_roh'`, kept forever) of one pair, newest first, read by row id.
CREATE INDEX IF NOT EXISTS pipeline_log_verlauf
    ON pipeline_log (user_id, character_id, id) WHERE art = 'turn_roh';
