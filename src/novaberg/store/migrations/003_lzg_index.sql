-- Long-term search at 1 M nodes: a denser HNSW graph for lzg_knoten.
--
-- 001 built the index with m = 16, ef_construction = 64. On clustered 384-d data that
-- graph tops out near recall@10 0.93 at 1 M nodes however large hnsw.ef_search is
-- (bench/memory.py). A wider candidate list while building (ef_construction) raises that
-- ceiling the most and costs about twice the build time; more links per node (m) cost
-- little extra build time. The values were chosen by measurement (bench/README.md,
-- "Long-term search"). bench/memory.py builds its index from the CREATE INDEX statement
-- in this file, so the benchmark measures exactly this index.
--
-- Runs inside the migration transaction (no CONCURRENTLY). On an empty table it takes
-- milliseconds, with 2 000 nodes about 5 s (2 busy cores); on a large existing table
-- writes to lzg_knoten wait until the rebuild is done. The graph is built in this process only (no parallel workers: they
-- would need maintenance_work_mem as shared memory, which small /dev/shm mounts such as
-- Docker's 64 MB default cannot give) with up to 512 MB for it, enough to keep ~190 000
-- nodes (2.8 kB each at 384-d, m = 32) in memory; it is taken as the graph grows.
SET LOCAL maintenance_work_mem = '512MB';
SET LOCAL max_parallel_maintenance_workers = 0;
DROP INDEX IF EXISTS lzg_knoten_embedding;
CREATE INDEX lzg_knoten_embedding ON lzg_knoten
    USING hnsw (embedding vector_cosine_ops) WITH (m = 32, ef_construction = 128);
