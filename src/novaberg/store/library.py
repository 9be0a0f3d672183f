"""The library's tables (migration 019): approved roots, their indexed files and the files'
passages. Storage and search only; reading, parsing and embedding are memory/library/.

**Invariants.** A file row and its passages are written in one transaction (`save_file`):
after a crash a file is either indexed whole, with the hash and mtime it was read at, or
still has its previous state — so a rerun that skips files whose hash or mtime is unchanged
never skips a half-written one. Revoking a root deletes its files, and with them (ON DELETE
CASCADE) every passage, in the same transaction that marks the root revoked: no passage of a
revoked folder is ever searchable. A passage carries its owner's `user_id`, so a search reads
one person's passages only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import numpy as np
from psycopg import AsyncConnection

from novaberg.store.pipelined import Reply, Rows, local_settings, pipeline
from novaberg.store.text_search import (
    BM25_B,
    BM25_K1,
    FREQUENT_MIN_DF,
    FREQUENT_SHARE,
    KEEP_RAREST,
)

ROOT_APPROVED: Final = "freigegeben"
ROOT_REVOKED: Final = "widerrufen"
"""`dateien_wurzeln.zustand` values."""

FILE_OK: Final = "ok"
FILE_FAILED: Final = "fehler"
FILE_SKIPPED: Final = "uebersprungen"
"""`dateien_index.status` values: indexed, could not be parsed, over a limit."""


@dataclass(frozen=True, slots=True)
class Root:
    """An approved (or revoked) folder of one person."""

    id: int
    user_id: str
    path: str
    state: str
    approved_at: datetime


@dataclass(frozen=True, slots=True)
class IndexedFile:
    """A file as last indexed (path relative to its root)."""

    id: int
    root_id: int
    path: str
    content_hash: str
    mtime: float
    size: int
    status: str
    reason: str
    parser: str


@dataclass(frozen=True, slots=True)
class FileRecord:
    """What to store about a file just read."""

    path: str
    content_hash: str
    mtime: float
    size: int
    status: str
    reason: str = ""
    parser: str = ""


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """One passage to store: text, heading path, page (None: the format has none), the
    lines it spans (1-based, inclusive), text-search configuration and vector."""

    text: str
    heading: str
    page: int | None
    line_from: int
    line_to: int
    language: str
    embedding: np.ndarray | None


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A passage read back with the file and root it comes from."""

    id: int
    text: str
    heading: str
    page: int | None
    line_from: int
    line_to: int
    file_path: str
    root_path: str
    user_id: str


_ROOT_COLUMNS: Final = "id, user_id, pfad AS path, zustand AS state, freigegeben_am AS approved_at"
_FILE_COLUMNS: Final = (
    "id, wurzel_id AS root_id, pfad AS path, inhalt_hash AS content_hash, mtime,"
    " groesse AS size, status, grund AS reason, parser"
)


async def approve_root(conn: AsyncConnection[Any], user_id: str, path: str) -> Root:
    """Approve `path` (a resolved real path) for `user_id`; approving it again (also after a
    revocation) keeps its id and renews the approval."""
    cur = await conn.execute(
        "INSERT INTO dateien_wurzeln (user_id, pfad) VALUES (%s, %s)"
        " ON CONFLICT (user_id, pfad) DO UPDATE SET zustand = 'freigegeben',"
        " freigegeben_am = CASE WHEN dateien_wurzeln.zustand = 'freigegeben'"
        " THEN dateien_wurzeln.freigegeben_am ELSE now() END, widerrufen_am = NULL"
        f" RETURNING {_ROOT_COLUMNS}",
        (user_id, path),
    )
    row = await cur.fetchone()
    assert row is not None
    return Root(**row)


async def roots(
    conn: AsyncConnection[Any], user_id: str | None = None, *, approved_only: bool = True
) -> list[Root]:
    """The roots of `user_id` (None: of everyone), oldest first."""
    cur = await conn.execute(
        f"SELECT {_ROOT_COLUMNS} FROM dateien_wurzeln"
        " WHERE (%(u)s::text IS NULL OR user_id = %(u)s)"
        " AND (NOT %(a)s OR zustand = 'freigegeben') ORDER BY id",
        {"u": user_id, "a": approved_only},
    )
    return [Root(**row) for row in await cur.fetchall()]


async def root_by_path(conn: AsyncConnection[Any], user_id: str, path: str) -> Root | None:
    """The approved root at `path` of `user_id`, or None."""
    cur = await conn.execute(
        f"SELECT {_ROOT_COLUMNS} FROM dateien_wurzeln"
        " WHERE user_id = %s AND pfad = %s AND zustand = 'freigegeben'",
        (user_id, path),
    )
    row = await cur.fetchone()
    return Root(**row) if row else None


async def revoke_root(conn: AsyncConnection[Any], root_id: int) -> int:
    """Revoke a root and delete its index (files and passages) in one transaction; how many
    passages went."""
    async with conn.transaction():
        cur = await conn.execute(
            "SELECT count(*) AS n FROM dateien_abschnitte c JOIN dateien_index f"
            " ON f.id = c.datei_id WHERE f.wurzel_id = %s",
            (root_id,),
        )
        row = await cur.fetchone()
        await conn.execute("DELETE FROM dateien_index WHERE wurzel_id = %s", (root_id,))
        await conn.execute(
            "UPDATE dateien_wurzeln SET zustand = 'widerrufen', widerrufen_am = now()"
            " WHERE id = %s",
            (root_id,),
        )
    return int(row["n"]) if row else 0


async def files(conn: AsyncConnection[Any], root_id: int) -> dict[str, IndexedFile]:
    """The root's indexed files by relative path."""
    cur = await conn.execute(
        f"SELECT {_FILE_COLUMNS} FROM dateien_index WHERE wurzel_id = %s", (root_id,)
    )
    return {row["path"]: IndexedFile(**row) for row in await cur.fetchall()}


async def save_file(
    conn: AsyncConnection[Any],
    root: Root,
    record: FileRecord,
    chunks: Sequence[ChunkRow],
) -> None:
    """Store a file's state and replace its passages, in one transaction (the module's
    invariant). Refused silently (nothing written) when the root was revoked meanwhile."""
    async with conn.transaction():
        cur = await conn.execute(
            "SELECT 1 FROM dateien_wurzeln WHERE id = %s AND zustand = 'freigegeben' FOR SHARE",
            (root.id,),
        )
        if await cur.fetchone() is None:
            return
        cur = await conn.execute(
            "INSERT INTO dateien_index (wurzel_id, pfad, inhalt_hash, mtime, groesse, status,"
            " grund, parser) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (wurzel_id, pfad) DO UPDATE SET inhalt_hash = EXCLUDED.inhalt_hash,"
            " mtime = EXCLUDED.mtime, groesse = EXCLUDED.groesse, status = EXCLUDED.status,"
            " grund = EXCLUDED.grund, parser = EXCLUDED.parser, indiziert_am = now()"
            " RETURNING id",
            (
                root.id,
                record.path,
                record.content_hash,
                record.mtime,
                record.size,
                record.status,
                record.reason,
                record.parser,
            ),
        )
        row = await cur.fetchone()
        assert row is not None
        file_id = int(row["id"])
        await conn.execute("DELETE FROM dateien_abschnitte WHERE datei_id = %s", (file_id,))
        if not chunks:
            return
        async with conn.cursor() as bulk:
            await bulk.executemany(
                "INSERT INTO dateien_abschnitte (datei_id, user_id, position, inhalt,"
                " ueberschrift, seite, zeile_von, zeile_bis, sprache, embedding)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::regconfig, %s)",
                [
                    (
                        file_id,
                        root.user_id,
                        position,
                        chunk.text,
                        chunk.heading,
                        chunk.page,
                        chunk.line_from,
                        chunk.line_to,
                        chunk.language,
                        chunk.embedding,
                    )
                    for position, chunk in enumerate(chunks)
                ],
            )


async def touch_file(conn: AsyncConnection[Any], file_id: int, mtime: float) -> None:
    """A file whose mtime changed but not its content: only the mtime is renewed."""
    await conn.execute("UPDATE dateien_index SET mtime = %s WHERE id = %s", (mtime, file_id))


async def delete_files(conn: AsyncConnection[Any], root_id: int, paths: Iterable[str]) -> int:
    """Forget files of a root (gone from disk); their passages go with them."""
    cur = await conn.execute(
        "DELETE FROM dateien_index WHERE wurzel_id = %s AND pfad = ANY(%s)",
        (root_id, list(paths)),
    )
    return cur.rowcount


async def chunk_count(conn: AsyncConnection[Any], user_id: str) -> int:
    """How many passages `user_id`'s library holds."""
    cur = await conn.execute(
        "SELECT count(*) AS n FROM dateien_abschnitte WHERE user_id = %s", (user_id,)
    )
    row = await cur.fetchone()
    return int(row["n"]) if row else 0


async def file_chunk_count(conn: AsyncConnection[Any], file_id: int) -> int:
    """How many passages one file has."""
    cur = await conn.execute(
        "SELECT count(*) AS n FROM dateien_abschnitte WHERE datei_id = %s", (file_id,)
    )
    row = await cur.fetchone()
    return int(row["n"]) if row else 0


async def root_counts(conn: AsyncConnection[Any], root_id: int) -> dict[str, int]:
    """Files per status and passages of one root (what `library list` shows)."""
    cur = await conn.execute(
        "SELECT f.status, count(DISTINCT f.id) AS files, count(c.id) AS chunks"
        " FROM dateien_index f LEFT JOIN dateien_abschnitte c ON c.datei_id = f.id"
        " WHERE f.wurzel_id = %s GROUP BY f.status",
        (root_id,),
    )
    counts = {FILE_OK: 0, FILE_FAILED: 0, FILE_SKIPPED: 0, "chunks": 0}
    for row in await cur.fetchall():
        counts[str(row["status"])] = int(row["files"])
        counts["chunks"] += int(row["chunks"])
    return counts


_WORDS_SQL: Final = """
WITH worte AS (
    SELECT DISTINCT w FROM unnest(tsvector_to_array(to_tsvector('simple', %(q)s))) AS w
    WHERE numnode(plainto_tsquery('german', w)) > 0
      AND numnode(plainto_tsquery('english', w)) > 0
), lexeme AS (
    SELECT unnest(tsvector_to_array(to_tsvector('german', w))) AS l FROM worte
    UNION SELECT unnest(tsvector_to_array(to_tsvector('english', w))) FROM worte
    UNION SELECT w FROM worte
), person AS (
    SELECT anzahl AS n, laenge::float8 / greatest(anzahl, 1) AS avg FROM bibliothek_person
    WHERE user_id = %(u)s AND anzahl > 0
), gewichte AS (
    SELECT quote_literal(x.lexem)::tsquery AS q, x.df,
           ln(1 + (p.n - x.df + 0.5) / (x.df + 0.5)) AS w,
           row_number() OVER (ORDER BY x.df, x.lexem) AS seltenheit,
           x.df <= greatest(%(min_df)s, %(share)s * p.n) AS waehlt,
           x.df <= greatest(%(min_df)s, %(common)s * p.n) AS seltener
    FROM lexeme l JOIN bibliothek_lexeme x ON x.user_id = %(u)s AND x.lexem = l.l, person p
), anfrage AS (
    SELECT string_agg(g.q::text, ' | ')::tsquery AS q FROM gewichte g
    WHERE g.waehlt OR (g.seltenheit <= %(keep)s AND g.seltener
                       AND NOT EXISTS (SELECT 1 FROM gewichte WHERE waehlt))
)
SELECT c.id,
       (SELECT sum(g.w) FROM gewichte g WHERE c.tsv @@ g.q)
       * (%(k1)s + 1) / (1 + %(k1)s * (1 - %(b)s + %(b)s * length(c.tsv) / p.avg)) AS score
FROM anfrage a, person p, dateien_abschnitte c
WHERE c.user_id = %(u)s AND c.tsv @@ a.q
ORDER BY score DESC, c.id LIMIT %(k)s
"""
"""BM25 over the person's library, as the archive ranks its turns (store/archive.py,
store/text_search.py): the query's content words reduced by every configuration (the query
does not know a passage's language), weighted by their idf among the person's passages
(`bibliothek_lexeme`, migration 023). Only lexemes the library holds count, and a lexeme in
more than `FREQUENT_SHARE` of the passages does not select candidates (it still scores
them; the rarest `KEEP_RAREST` select when all are frequent, unless they are in more than
`COMMON_SHARE` of the passages): one word of nearly every passage made the old OR-ed query
rank the whole library (30–90 ms at 10 000 passages)."""

COMMON_SHARE: Final = 0.1
"""A lexeme in more than a tenth of the person's passages (and more than `FREQUENT_MIN_DF`)
never selects candidates, not even as the rarest of a query: "day" in a third of them
brought thousands of passages to score (7–15 ms) for a word that tells none apart. The
vector list still answers such a query."""


def _words_params(user_id: str, query: str, k: int) -> dict[str, Any]:
    return {
        "q": query,
        "u": user_id,
        "k": int(k),
        "min_df": FREQUENT_MIN_DF,
        "share": FREQUENT_SHARE,
        "keep": KEEP_RAREST,
        "common": COMMON_SHARE,
        "k1": BM25_K1,
        "b": BM25_B,
    }


async def search_words(
    conn: AsyncConnection[Any], user_id: str, query: str, k: int
) -> list[tuple[int, float]]:
    """(passage id, score) of the k passages of `user_id` that match `query` best by words."""
    return await (await queue_search_words(conn, user_id, query, k)).read()


async def queue_search_words(
    conn: AsyncConnection[Any], user_id: str, query: str, k: int
) -> Reply[list[tuple[int, float]]]:
    """`search_words` queued (the one memory search's pipeline, memory/search/lists.py)."""
    cur = await conn.execute(_WORDS_SQL, _words_params(user_id, query, k))
    return Reply.of(cur, lambda rows: [(int(row["id"]), float(row["score"])) for row in rows])


EXACT_LIMIT: Final = 3_000
"""A library of at most this many passages is ranked exactly, a larger one through HNSW
(as the archive decides, store/archive.py): filtered by person after an index scan, a small
library beside large ones would lose its hits; ranking a large one exactly costs ~70 ms at
10 000 passages where HNSW takes a few."""

EF_SEARCH: Final = 80
MAX_SCAN_TUPLES: Final = 20_000
"""HNSW settings of a large library's search (per transaction; the archive's values)."""

_NEAREST_SQL: Final = (
    "SELECT id, 1 - (embedding <=> %(v)s) AS cosine FROM dateien_abschnitte"
    " WHERE user_id = %(u)s AND embedding IS NOT NULL AND ({size}) {compare} %(limit)s"
    " ORDER BY {order} LIMIT %(k)s"
)
_SIZE_SQL: Final = "SELECT coalesce(max(anzahl), 0) FROM bibliothek_person WHERE user_id = %(u)s"
_EXACT_SQL: Final = _NEAREST_SQL.format(
    size=_SIZE_SQL, compare="<=", order="(embedding <=> %(v)s) + 0, id"
)
_THROUGH_INDEX_SQL: Final = _NEAREST_SQL.format(
    size=_SIZE_SQL, compare=">", order="embedding <=> %(v)s"
)
"""The two ways to rank a person's passages by vector, each guarded by the size her
statistics row holds (`bibliothek_person`, migration 023): both are queued, the guard of
one is false and its plan stops at a one-time filter before reading a row. So the choice
costs no round trip of its own (it used to cost a count, and the HNSW settings' transaction
three more outside a pipeline)."""


async def queue_search_vector(
    conn: AsyncConnection[Any], user_id: str, vector: np.ndarray, k: int
) -> Reply[list[tuple[int, float]]]:
    """`search_vector` queued in the caller's pipeline (`store/pipelined.py`; the HNSW
    settings stay local to their statement)."""
    params = {
        "v": np.asarray(vector, dtype=np.float32),
        "u": user_id,
        "k": int(k),
        "limit": EXACT_LIMIT,
    }
    exact = await conn.execute(_EXACT_SQL, params)
    async with local_settings(conn):
        await conn.execute(
            "SELECT set_config('hnsw.ef_search', %s, true),"
            " set_config('hnsw.iterative_scan', 'relaxed_order', true),"
            " set_config('hnsw.max_scan_tuples', %s, true)",
            (str(max(EF_SEARCH, int(k))), str(MAX_SCAN_TUPLES)),
        )
        through_index = await conn.execute(_THROUGH_INDEX_SQL, params)

    def parse(results: list[Rows]) -> list[tuple[int, float]]:
        hits = [(int(row["id"]), float(row["cosine"])) for rows in results for row in rows]
        return sorted(hits, key=lambda hit: (-hit[1], hit[0]))

    return Reply([exact, through_index], parse)


async def search_vector(
    conn: AsyncConnection[Any], user_id: str, vector: np.ndarray, k: int
) -> list[tuple[int, float]]:
    """(passage id, cosine) of the k passages of `user_id` nearest to `vector`, best first:
    exactly up to `EXACT_LIMIT` passages (the `+ 0` keeps the index out of the plan),
    through HNSW with iterative scan beyond (re-sorted here: `relaxed_order`). One round
    trip."""
    async with pipeline(conn):
        reply = await queue_search_vector(conn, user_id, vector, k)
    return await reply.read()


async def chunks_by_id(conn: AsyncConnection[Any], ids: Sequence[int]) -> dict[int, StoredChunk]:
    """Passages with their file and root, by id."""
    return await (await queue_chunks_by_id(conn, ids)).read()


async def queue_chunks_by_id(
    conn: AsyncConnection[Any], ids: Sequence[int]
) -> Reply[dict[int, StoredChunk]]:
    """`chunks_by_id` queued (the one memory search reads them with the other layers'
    details, memory/search/provenance.py); no statement for no ids."""
    if not ids:
        return Reply.ready({})
    cur = await conn.execute(
        "SELECT c.id, c.inhalt AS text, c.ueberschrift AS heading, c.seite AS page,"
        " c.zeile_von AS line_from, c.zeile_bis AS line_to, f.pfad AS file_path,"
        " w.pfad AS root_path, c.user_id"
        " FROM dateien_abschnitte c JOIN dateien_index f ON f.id = c.datei_id"
        " JOIN dateien_wurzeln w ON w.id = f.wurzel_id WHERE c.id = ANY(%s)",
        (list(ids),),
    )
    return Reply.of(cur, lambda rows: {int(row["id"]): StoredChunk(**row) for row in rows})
