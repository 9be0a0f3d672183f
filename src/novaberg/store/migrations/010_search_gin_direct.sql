-- The search's GIN indexes are updated directly, without a pending list
-- (docs/behaviour/memory.md#conversation-archive). With PostgreSQL's default `fastupdate`,
-- new rows' entries wait in a pending list of up to 4 MB until a vacuum merges them, and
-- every search reads that whole list: at 100 000 archived turns a full list made each
-- lexical query read 450 more pages (7 ms → 30 ms). A turn writes a few rows, so direct
-- updates cost little; an import's batches pay a little more per row.
ALTER INDEX gespraechsarchiv_tsv SET (fastupdate = off);
ALTER INDEX archiv_lexeme_trgm SET (fastupdate = off);
ALTER INDEX lzg_knoten_tsv SET (fastupdate = off);
-- what waits in the lists now is merged once (later rows go straight into the index)
SELECT gin_clean_pending_list('gespraechsarchiv_tsv'::regclass),
       gin_clean_pending_list('archiv_lexeme_trgm'::regclass),
       gin_clean_pending_list('lzg_knoten_tsv'::regclass);
