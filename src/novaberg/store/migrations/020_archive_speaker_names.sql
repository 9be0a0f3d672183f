-- Speakers' names of imported chats (docs/behaviour/memory.md#conversation-archive).
-- sprecher_name: who said it, as the export names them (SillyTavern's `name`, a plain
-- JSONL's optional `name`; NULL for live turns, whose speakers are the pair). The name is
-- part of the row's words, so "What did Lena say about the garden?" finds Lena's turns:
-- its lexeme (the `simple` configuration, never stemmed) goes before the text's lexemes.
-- Rows without a name keep exactly the words they had, so the statistics kept by trigger
-- (`archiv_paar`, `archiv_lexeme`, migration 006) stay equal to a count over the rows.
ALTER TABLE gespraechsarchiv ADD COLUMN IF NOT EXISTS sprecher_name TEXT;
DROP INDEX IF EXISTS gespraechsarchiv_tsv;
ALTER TABLE gespraechsarchiv DROP COLUMN IF EXISTS tsv;
ALTER TABLE gespraechsarchiv ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS (
    to_tsvector('simple'::regconfig, coalesce(sprecher_name, ''))
    || to_tsvector(sprache, inhalt)
) STORED;
CREATE INDEX IF NOT EXISTS gespraechsarchiv_tsv
    ON gespraechsarchiv USING gin (user_id, character_id, tsv) WITH (fastupdate = off);

-- the name is part of the row's words: it never changes either
CREATE OR REPLACE FUNCTION archiv_text_unveraenderlich() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.inhalt IS DISTINCT FROM OLD.inhalt OR NEW.sprache IS DISTINCT FROM OLD.sprache
       OR NEW.sprecher_name IS DISTINCT FROM OLD.sprecher_name
       OR NEW.user_id IS DISTINCT FROM OLD.user_id
       OR NEW.character_id IS DISTINCT FROM OLD.character_id THEN
        RAISE EXCEPTION 'gespraechsarchiv: text, name, language and pair of a row never change';
    END IF;
    RETURN NEW;
END;
$$;

-- Which of a query's name-like words are speakers of the pair (their first names): a look-up
-- of a few index entries, so a search knows whether "Lena" in "What did Lena say …" is
-- someone who spoke before it ranks that person's turns as a list of their own.
CREATE INDEX IF NOT EXISTS gespraechsarchiv_sprecher_name
    ON gespraechsarchiv (user_id, character_id, (split_part(lower(sprecher_name), ' ', 1)))
    WHERE sprecher_name IS NOT NULL;
