-- Every API token gets a stable public id, so a person or an operator can name a token to
-- revoke (`DELETE /tokens/{id}`, `novaberg user tokens`) without ever showing its hash.
-- Existing tokens are numbered as they are found; new ones in the order they are issued.
ALTER TABLE api_tokens ADD COLUMN IF NOT EXISTS token_id BIGSERIAL;
CREATE UNIQUE INDEX IF NOT EXISTS api_tokens_token_id ON api_tokens (token_id);
