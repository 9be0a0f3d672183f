-- What keeps the archive search fast in a large archive
-- (docs/behaviour/memory.md#conversation-archive).

-- The search's GIN indexes are updated directly, without a pending list. With PostgreSQL's
-- default `fastupdate`, new rows' entries wait in a pending list of up to 4 MB until a
-- vacuum merges them, and every search reads that whole list: at 100 000 archived turns a
-- full list made each lexical query read 450 more pages (7 ms → 30 ms). A turn writes a
-- few rows, so direct updates cost little; an import's batches pay a little more per row.
ALTER INDEX gespraechsarchiv_tsv SET (fastupdate = off);
ALTER INDEX archiv_lexeme_trgm SET (fastupdate = off);
ALTER INDEX lzg_knoten_tsv SET (fastupdate = off);
-- what waits in the lists now is merged once (later rows go straight into the index)
SELECT gin_clean_pending_list('gespraechsarchiv_tsv'::regclass),
       gin_clean_pending_list('archiv_lexeme_trgm'::regclass),
       gin_clean_pending_list('lzg_knoten_tsv'::regclass);

-- An archive row keeps its two vectors in the row (up to a page): pgvector stores a vector
-- out of line once a row passes 2 kB, and a row with two 384-d vectors has 3 kB, so ranking
-- a time window or a small pair exactly read each row's vector through the TOAST table
-- (7 pages a row instead of 1: 46 ms for 1 400 rows). Rows written from now on; earlier
-- rows keep their layout until rewritten.
ALTER TABLE gespraechsarchiv SET (toast_tuple_target = 8160);
