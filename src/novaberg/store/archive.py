"""The conversation archive (`gespraechsarchiv`): every utterance and every answer of a pair —
live, impulse or imported — kept beyond the session and searchable by vector and by words. Storage and search only; the vectors are given (memory/archive.py embeds).

**Idempotency invariant.** A row is identified by (pair, `quelle`, `quell_id`): the source
it came from and that source's own id — for a live turn `live` and
"{turn_id}:{speaker}:{trigger_count}", for an imported one the file format and the id the
file gives (or a hash of the message where the format has none). The table's UNIQUE
constraint makes every write `ON CONFLICT DO NOTHING`, so writing a row again — a turn
re-run after a worker died, an import run again, resumed or repeated with a longer export —
adds nothing and changes nothing. A batch is one statement in one transaction: its rows are
stored whole or not at all, never half. The text statistics (`archiv_paar`,
`archiv_lexeme`) follow from the rows actually inserted or deleted (statement triggers see
only those), and a row's text never changes (a trigger refuses it), so they always equal a
count over the rows. Retention: `purge` deletes unpinned rows a year after they were
archived (`LOG_RETENTION_DAYS` of the long-term decay job).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import numpy as np
from psycopg import AsyncConnection, AsyncCursor

from novaberg.pair import Pair
from novaberg.store.pipelined import Reply, Rows, local_settings, pipeline
from novaberg.store.text_search import (
    BM25_B,
    BM25_K1,
    CONFIG_SIMPLE,
    SPEAKER_KEY_SQL,
    QueryTerms,
)

TABLE: Final = "gespraechsarchiv"

SPEAKER_USER: Final = "user"
SPEAKER_CHARACTER: Final = "character"
"""`sprecher` values."""

SOURCE_LIVE: Final = "live"
"""`quelle` of turns spoken here (imports name their format)."""

ORIGIN_IMPORT: Final = "import"
"""`herkunft` of an imported row (live rows carry the stimulus origin of their turn)."""

VIEW_TURN: Final = "embedding"
VIEW_CONTEXT: Final = "embedding_kontext"
"""The two vector views of a row: the turn alone, the turn with its predecessor."""

EXACT_LIMIT: Final = 3_000
"""A pair (or a time window) with at most this many rows is ranked exactly, a larger one
through HNSW: the planner cannot see one pair's size next to others (as for the long-term
memory, docs/behaviour/memory.md#long-term-search), and an exact ranking of 3 000 rows
stays within a few ms."""

EF_SEARCH: Final = 80
MAX_SCAN_TUPLES: Final = 20_000
"""HNSW settings of an archive search (per transaction). `relaxed_order`: the hits are
re-sorted by cosine here, so the index need not return them in exact order."""

ROW_COLUMNS: Final = (
    "a.id, a.user_id, a.character_id, a.sprecher AS speaker, a.inhalt AS text, a.zeit AS time,"
    " a.turn_id, a.nachrichten_ids AS message_ids, a.herkunft AS origin, a.quelle AS source,"
    " a.quell_id AS source_id, a.gespraech AS conversation, a.angeheftet AS pinned,"
    " a.sprecher_name AS name"
)
"""The columns of an `ArchivedTurn` (without vectors), each under its attribute name."""


@dataclass(frozen=True, slots=True)
class ArchivedTurn:
    """One archived row as read back (`ROW_COLUMNS`)."""

    id: int
    user_id: str
    character_id: str
    speaker: str
    text: str
    time: datetime
    turn_id: str | None
    message_ids: list[str]
    origin: str
    source: str
    source_id: str
    conversation: str | None
    pinned: bool
    name: str | None = None
    """Who said it, where an imported chat names them."""


def _turns(rows: Iterable[Mapping[str, Any]]) -> list[ArchivedTurn]:
    return [ArchivedTurn(**{**row, "message_ids": list(row["message_ids"] or [])}) for row in rows]


@dataclass(frozen=True, slots=True)
class ArchiveRow:
    """One row to write. `context_embedding` None: derived from the pair's previous row in
    SQL (live turns); imports pass it (they know each row's predecessor in the file)."""

    pair: Pair
    speaker: str
    text: str
    time: datetime
    origin: str
    source: str
    source_id: str
    language: str
    turn_id: str | None = None
    message_ids: tuple[str, ...] = ()
    conversation: str | None = None
    embedding: np.ndarray | None = None
    context_embedding: np.ndarray | None = None
    pinned: bool = False
    name: str | None = None
    """Who said it, as an imported chat names them (searchable by words: migration 020)."""


def _vector(value: np.ndarray | Sequence[float] | None) -> np.ndarray | None:
    return None if value is None else np.asarray(value, dtype=np.float32)


def stored_vector(value: Any) -> np.ndarray:
    """A vector read back (pgvector's `Vector`, or an array) as a float32 array."""
    if hasattr(value, "to_numpy"):
        return np.asarray(value.to_numpy(), dtype=np.float32)
    return np.asarray(value, dtype=np.float32)


_COLUMNS: Final = (
    "user_id, character_id, sprecher, inhalt, zeit, turn_id, nachrichten_ids, herkunft,"
    " quelle, quell_id, gespraech, sprache, embedding, embedding_kontext, angeheftet,"
    " sprecher_name"
)
_ROW_VALUES: Final = "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::regconfig, %s, %s, %s, %s)"

_INSERT: Final = (
    f"INSERT INTO {TABLE} ({_COLUMNS})"
    " VALUES (%(u)s, %(c)s, %(speaker)s, %(text)s, %(time)s, %(turn)s, %(ids)s,"
    " %(origin)s, %(source)s, %(source_id)s, %(conversation)s, {language}, %(v)s,"
    " {context}, %(pinned)s, %(name)s)"
    " ON CONFLICT (user_id, character_id, quelle, quell_id) DO NOTHING RETURNING id"
)

_PREVIOUS_LANGUAGE: Final = (
    f"coalesce((SELECT p.sprache FROM {TABLE} p"
    " WHERE p.user_id = %(u)s AND p.character_id = %(c)s AND p.zeit <= %(time)s"
    " AND p.sprache <> 'simple'::regconfig ORDER BY p.zeit DESC, p.id DESC LIMIT 1),"
    " 'simple'::regconfig)"
)
"""The language of a live row too short to tell its own ("Zwei Katzen."): that of the pair's
latest earlier row that told one — a conversation keeps its language (imports decide by
the whole conversation instead: `text_search.text_configs`)."""

_PREVIOUS_VECTOR: Final = (
    f"(SELECT l2_normalize(%(v)s + p.embedding) FROM {TABLE} p"
    " WHERE p.user_id = %(u)s AND p.character_id = %(c)s AND p.zeit <= %(time)s"
    " AND p.embedding IS NOT NULL ORDER BY p.zeit DESC, p.id DESC LIMIT 1)"
)
"""The context view of a live row: its vector plus that of the pair's latest earlier row."""


def _params(row: ArchiveRow) -> dict[str, Any]:
    return {
        "u": row.pair.user_id,
        "c": row.pair.character_id,
        "speaker": row.speaker,
        "text": row.text,
        "time": row.time,
        "turn": row.turn_id,
        "ids": list(row.message_ids),
        "origin": row.origin,
        "source": row.source,
        "source_id": row.source_id,
        "conversation": row.conversation,
        "language": row.language,
        "v": _vector(row.embedding),
        "kv": _vector(row.context_embedding),
        "pinned": row.pinned,
        "name": row.name,
    }


async def insert_live(conn: AsyncConnection[Any], row: ArchiveRow) -> int | None:
    """Write one live row (its context view from the pair's previous row); the new id, or
    None when the row was archived already."""
    return await inserted_id(await send_live(conn, row))


async def send_live(conn: AsyncConnection[Any], row: ArchiveRow) -> AsyncCursor[Any]:
    """Send `insert_live`'s statement without waiting for its answer (in a pipeline it
    travels with the caller's other statements); `inserted_id` reads the answer."""
    context = _PREVIOUS_VECTOR if row.embedding is not None else "NULL"
    language = _PREVIOUS_LANGUAGE if row.language == CONFIG_SIMPLE else "%(language)s::regconfig"
    return await conn.execute(_INSERT.format(context=context, language=language), _params(row))


async def inserted_id(cur: AsyncCursor[Any]) -> int | None:
    """The id `send_live`'s statement returned, None when the row was archived already."""
    found = await cur.fetchone()
    return None if found is None else int(found["id"])


def _values(row: ArchiveRow) -> tuple[Any, ...]:
    p = _params(row)
    return (
        p["u"], p["c"], p["speaker"], p["text"], p["time"], p["turn"], p["ids"],
        p["origin"], p["source"], p["source_id"], p["conversation"], p["language"], p["v"],
        p["kv"], p["pinned"], p["name"],
    )  # fmt: skip


async def insert_batch(conn: AsyncConnection[Any], rows: Sequence[ArchiveRow]) -> list[int | None]:
    """Write a batch as one statement (one transaction, all or nothing; the statistics
    triggers run once for it); per row its new id, or None when it was archived already."""
    if not rows:
        return []
    sql = (
        f"INSERT INTO {TABLE} ({_COLUMNS}) VALUES {', '.join([_ROW_VALUES] * len(rows))}"
        " ON CONFLICT (user_id, character_id, quelle, quell_id) DO NOTHING"
        " RETURNING id, user_id, character_id, quelle, quell_id"
    )
    cur = await conn.execute(sql, [value for row in rows for value in _values(row)])
    stored = {
        (r["user_id"], r["character_id"], r["quelle"], r["quell_id"]): int(r["id"])
        for r in await cur.fetchall()
    }
    return [
        stored.get((row.pair.user_id, row.pair.character_id, row.source, row.source_id))
        for row in rows
    ]


async def analyze_vocabulary(conn: AsyncConnection[Any]) -> None:
    """Refresh the planner's statistics of the vocabulary (`archiv_lexeme`) after a bulk
    import: until autovacuum's next analyse the query terms' look-ups (compounds, speakers)
    would scan a pair's whole vocabulary instead of using its indexes."""
    await conn.execute("ANALYZE archiv_lexeme")


async def existing_source_ids(
    conn: AsyncConnection[Any], pair: Pair, source: str, source_ids: Sequence[str]
) -> set[str]:
    """Which of these source ids the pair's archive holds already."""
    if not source_ids:
        return set()
    cur = await conn.execute(
        f"SELECT quell_id FROM {TABLE} WHERE user_id = %s AND character_id = %s"
        " AND quelle = %s AND quell_id = ANY(%s)",
        (pair.user_id, pair.character_id, source, list(source_ids)),
    )
    return {str(row["quell_id"]) for row in await cur.fetchall()}


async def user_turn_count(conn: AsyncConnection[Any], user_id: str) -> int:
    """Archived turns of the user with every character (the statistics the triggers keep
    exact: no count over the rows)."""
    cur = await conn.execute(
        "SELECT coalesce(sum(anzahl), 0) AS n FROM archiv_paar WHERE user_id = %s", (user_id,)
    )
    row = await cur.fetchone()
    return int(row["n"]) if row is not None else 0


async def vectors_of(
    conn: AsyncConnection[Any], pair: Pair, source: str, source_ids: Sequence[str]
) -> dict[str, np.ndarray]:
    """The stored turn vectors of these source ids (an import's predecessors)."""
    if not source_ids:
        return {}
    cur = await conn.execute(
        f"SELECT quell_id, embedding FROM {TABLE} WHERE user_id = %s AND character_id = %s"
        " AND quelle = %s AND quell_id = ANY(%s) AND embedding IS NOT NULL",
        (pair.user_id, pair.character_id, source, list(source_ids)),
    )
    return {str(row["quell_id"]): stored_vector(row["embedding"]) for row in await cur.fetchall()}


@dataclass(frozen=True, slots=True)
class Filters:
    """Which rows a search may return: inside `window` [start, end), said before `before`
    (the enricher leaves out what the session holds), not of turn `exclude_turn`, said by
    one of `speakers` (speaker keys, `text_search.SPEAKER_KEY_SQL`) when any are given."""

    window: tuple[datetime, datetime] | None = None
    before: datetime | None = None
    exclude_turn: str | None = None
    speakers: tuple[str, ...] = ()

    def sql(self, alias: str = "a") -> str:
        parts = []
        if self.window is not None:
            parts.append(f" AND {alias}.zeit >= %(start)s AND {alias}.zeit < %(end)s")
        if self.before is not None:
            parts.append(f" AND {alias}.zeit < %(before)s")
        if self.exclude_turn is not None:
            parts.append(f" AND {alias}.turn_id IS DISTINCT FROM %(exclude_turn)s")
        if self.speakers:
            parts.append(f" AND {SPEAKER_KEY_SQL.format(alias=alias)} = ANY(%(speakers)s)")
        return "".join(parts)

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if self.window is not None:
            params["start"], params["end"] = self.window
        if self.before is not None:
            params["before"] = self.before
        if self.exclude_turn is not None:
            params["exclude_turn"] = self.exclude_turn
        if self.speakers:
            params["speakers"] = list(self.speakers)
        return params


def nearest_sql(view: str, filters: Filters, *, index_order: bool) -> str:
    """The k rows nearest to a vector in one view; `index_order=False` ranks exactly (the
    `+ 0` keeps the HNSW index out of the plan)."""
    if view not in (VIEW_TURN, VIEW_CONTEXT):
        raise ValueError(f"unknown archive view {view!r}")
    distance = f"a.{view} <=> %(v)s"
    order = distance if index_order else f"({distance}) + 0"
    return (
        f"SELECT a.id, 1 - ({distance}) AS cosine FROM {TABLE} a"
        f" WHERE a.user_id = %(u)s AND a.character_id = %(c)s AND a.{view} IS NOT NULL"
        f"{filters.sql()} ORDER BY {order} LIMIT %(k)s"
    )


async def nearest(
    conn: AsyncConnection[Any],
    pair: Pair,
    vector: np.ndarray | Sequence[float],
    k: int,
    *,
    view: str = VIEW_TURN,
    filters: Filters = Filters(),
    candidates: int,
) -> list[tuple[int, float]]:
    """(row id, cosine) of the k rows nearest to `vector`, best first. `candidates`: how
    many rows the filters leave at most (picks exact ranking or HNSW)."""
    found = await nearest_views(
        conn, pair, vector, k, views=(view,), filters=filters, candidates=candidates
    )
    return found[view]


async def nearest_views(
    conn: AsyncConnection[Any],
    pair: Pair,
    vector: np.ndarray | Sequence[float],
    k: int,
    *,
    views: Sequence[str],
    filters: Filters = Filters(),
    candidates: int,
) -> dict[str, list[tuple[int, float]]]:
    """`nearest` for several views in one round trip on one connection (pipeline mode:
    the settings and every view's query go out together): a search's vector lists cost
    one wake-up of the server and of this process, not one per view."""
    async with pipeline(conn):
        reply = await queue_nearest_views(
            conn, pair, vector, k, views=views, filters=filters, candidates=candidates
        )
    return await reply.read()


async def queue_nearest_views(
    conn: AsyncConnection[Any],
    pair: Pair,
    vector: np.ndarray | Sequence[float],
    k: int,
    *,
    views: Sequence[str],
    filters: Filters = Filters(),
    candidates: int,
) -> Reply[dict[str, list[tuple[int, float]]]]:
    """`nearest_views` queued in the caller's pipeline (`store/pipelined.py`); the HNSW
    settings, when the rows are too many to rank exactly, stay local to its statements.

    Planned with the parameters every time (`force_custom_plan`): a statement the driver
    has prepared gets a generic plan after five runs, and the generic plan of a time
    window guesses 500 rows and ranks the window exactly through the time index — 9 500
    rows, 450 ms for one month of a 100 000-turn archive, where HNSW takes a few ms."""
    exact = candidates <= EXACT_LIMIT
    params = {
        "v": _vector(vector),
        "u": pair.user_id,
        "c": pair.character_id,
        "k": int(k),
        **filters.params(),
    }
    if exact:
        cursors = [
            await conn.execute(nearest_sql(view, filters, index_order=False), params)
            for view in views
        ]
    else:
        async with local_settings(conn):
            await conn.execute(
                "SELECT set_config('hnsw.ef_search', %s, true),"
                " set_config('hnsw.iterative_scan', 'relaxed_order', true),"
                " set_config('hnsw.max_scan_tuples', %s, true),"
                " set_config('plan_cache_mode', 'force_custom_plan', true)",
                (str(max(EF_SEARCH, int(k))), str(MAX_SCAN_TUPLES)),
            )
            cursors = [
                await conn.execute(nearest_sql(view, filters, index_order=True), params)
                for view in views
            ]

    def parse(results: list[Rows]) -> dict[str, list[tuple[int, float]]]:
        found: dict[str, list[tuple[int, float]]] = {}
        for view, rows in zip(views, results, strict=True):
            hits = [(int(row["id"]), float(row["cosine"])) for row in rows]
            hits.sort(key=lambda hit: -hit[1])
            found[view] = hits
        return found

    return Reply(cursors, parse)


CONTEXT_WORD_SHARE: Final = 0.5
"""The words' second view: a turn also matches by the words of the turn before it, at half
the score ("Wie heißt dein Kater?" — "Mephisto." is found by "Kater"). Computed at query
time from the pair's next row (index on pair and time), so nothing is stored twice."""


def lexical_sql(filters: Filters, *, with_next: bool) -> str:
    """BM25 with one occurrence per term: Σ idf of the matched lexemes × the length factor
    (the factor's formula is `text_search.length_factor`, written out in SQL); with
    `with_next`, each matched row's successor too, at `CONTEXT_WORD_SHARE` of its score."""
    matched = (
        "SELECT a.id, a.zeit,"
        " (SELECT sum(t.w) FROM unnest(%(tq)s::tsquery[], %(w)s::float8[]) AS t(q, w)"
        "  WHERE a.tsv @@ t.q)"
        " * (%(k1)s + 1) / (1 + %(k1)s * (1 - %(b)s + %(b)s * length(a.tsv) / %(avg)s))"
        " AS score"
        f" FROM {TABLE} a WHERE a.user_id = %(u)s AND a.character_id = %(c)s"
        f" AND a.tsv @@ %(any)s::tsquery{filters.sql()}"
        " ORDER BY score DESC, a.zeit DESC LIMIT %(k)s"
    )
    if not with_next:
        return f"SELECT id, score FROM ({matched}) m"
    return (
        f"WITH m AS ({matched})"
        " SELECT id, score FROM m UNION ALL"
        " SELECT n.id, m.score * %(share)s FROM m CROSS JOIN LATERAL ("
        f"  SELECT a.id FROM {TABLE} a WHERE a.user_id = %(u)s AND a.character_id = %(c)s"
        f"  AND (a.zeit, a.id) > (m.zeit, m.id){filters.sql()}"
        "  ORDER BY a.zeit, a.id LIMIT 1) n"
    )


async def lexical(
    conn: AsyncConnection[Any],
    pair: Pair,
    terms: QueryTerms,
    k: int,
    *,
    filters: Filters = Filters(),
    with_next: bool = False,
) -> list[tuple[int, float]]:
    """(row id, BM25 score) of the k best rows by words, best first (`with_next`: a row
    also by the words of the row before it, see `CONTEXT_WORD_SHARE`)."""
    reply = await queue_lexical(conn, pair, terms, k, filters=filters, with_next=with_next)
    return await reply.read()


async def queue_lexical(
    conn: AsyncConnection[Any],
    pair: Pair,
    terms: QueryTerms,
    k: int,
    *,
    filters: Filters = Filters(),
    with_next: bool = False,
) -> Reply[list[tuple[int, float]]]:
    """`lexical` queued in the caller's pipeline (`store/pipelined.py`)."""
    if not terms.selecting:
        return Reply.ready([])
    cur = await conn.execute(  # planned per query: the terms' selectivity decides the plan
        lexical_sql(filters, with_next=with_next),
        {
            "tq": terms.term_queries,
            "w": terms.weights,
            "any": terms.any_query,
            "k1": BM25_K1,
            "b": BM25_B,
            "avg": terms.avg_length or 1.0,
            "u": pair.user_id,
            "c": pair.character_id,
            "k": int(k),
            "share": CONTEXT_WORD_SHARE,
            **filters.params(),
        },
        prepare=False,
    )

    def parse(rows: Rows) -> list[tuple[int, float]]:
        best: dict[int, float] = {}
        for row in rows:
            ident, score = int(row["id"]), float(row["score"] or 0.0)
            best[ident] = max(score, best.get(ident, 0.0))
        return sorted(best.items(), key=lambda item: -item[1])[:k]

    return Reply.of(cur, parse)


async def in_window(
    conn: AsyncConnection[Any], pair: Pair, k: int, *, filters: Filters
) -> list[tuple[int, float]]:
    """(row id, epoch) of the k newest rows the filters leave (a time window's own list)."""
    return await (await queue_in_window(conn, pair, k, filters=filters)).read()


async def queue_in_window(
    conn: AsyncConnection[Any], pair: Pair, k: int, *, filters: Filters
) -> Reply[list[tuple[int, float]]]:
    """`in_window` queued in the caller's pipeline (outside one, sent at once)."""
    cur = await conn.execute(
        f"SELECT a.id, extract(epoch FROM a.zeit) AS t FROM {TABLE} a"
        f" WHERE a.user_id = %(u)s AND a.character_id = %(c)s{filters.sql()}"
        " ORDER BY a.zeit DESC, a.id DESC LIMIT %(k)s",
        {"u": pair.user_id, "c": pair.character_id, "k": int(k), **filters.params()},
    )
    return Reply.of(cur, lambda rows: [(int(row["id"]), float(row["t"])) for row in rows])


async def queue_rows_by_id(
    conn: AsyncConnection[Any], ids: Iterable[int]
) -> Reply[dict[int, ArchivedTurn]]:
    """The rows (without vectors) of these ids, queued in the caller's pipeline."""
    wanted = sorted(set(ids))
    if not wanted:
        return Reply.ready({})
    cur = await conn.execute(f"SELECT {ROW_COLUMNS} FROM {TABLE} a WHERE a.id = ANY(%s)", (wanted,))
    return Reply.of(cur, lambda rows: {turn.id: turn for turn in _turns(rows)})


_RESTATED_SQL: Final = (
    f"SELECT a.id AS older, b.id AS newer, 1 - (a.embedding <=> b.embedding) AS cosine"
    f" FROM {TABLE} a JOIN {TABLE} b ON b.id = ANY(%(ids)s) AND b.id <> a.id"
    " AND (b.zeit, b.id) > (a.zeit, a.id) AND b.sprecher = a.sprecher"
    " AND b.sprecher_name IS NOT DISTINCT FROM a.sprecher_name"
    " WHERE a.id = ANY(%(ids)s) AND a.embedding IS NOT NULL AND b.embedding IS NOT NULL"
    " AND b.inhalt NOT LIKE '%%?%%'"
    " AND EXISTS (SELECT 1 FROM unnest(tsvector_to_array(a.tsv)) AS l"
    "   WHERE l = ANY(%(lexemes)s) AND l = ANY(tsvector_to_array(b.tsv)))"
    " AND 1 - (a.embedding <=> b.embedding) >= %(min)s"
)


async def queue_restated(
    conn: AsyncConnection[Any], ids: Iterable[int], lexemes: Sequence[str], min_cosine: float
) -> Reply[list[tuple[int, int, float]]]:
    """(older id, newer id, cosine) of the pairs among these rows that look like one fact
    told twice: one speaker, both with a word of the question (`lexemes`: its own words'
    selecting lexemes, `QueryTerms.topic`), turn vectors at cosine ≥ `min_cosine`, and the
    newer asking nothing (no "?" in it: a turn that asks about the topic tells no value).
    Queued in the caller's pipeline; a handful of ids (a search's top hits), so the pairs
    are compared directly."""
    wanted = sorted(set(ids))
    if len(wanted) < 2 or not lexemes:
        return Reply.ready([])
    cur = await conn.execute(
        _RESTATED_SQL, {"ids": wanted, "lexemes": list(lexemes), "min": float(min_cosine)}
    )
    return Reply.of(
        cur,
        lambda rows: [(int(r["older"]), int(r["newer"]), float(r["cosine"])) for r in rows],
    )


async def queue_rows_by_turn(
    conn: AsyncConnection[Any], pair: Pair, turn_ids: Iterable[str]
) -> Reply[list[ArchivedTurn]]:
    """The pair's rows of these turns, oldest first (provenance of memory entries),
    queued in the caller's pipeline."""
    wanted = sorted({t for t in turn_ids if t})
    if not wanted:
        return Reply.ready([])
    cur = await conn.execute(
        f"SELECT {ROW_COLUMNS} FROM {TABLE} a WHERE a.turn_id = ANY(%s)"
        " AND a.user_id = %s AND a.character_id = %s ORDER BY a.zeit, a.id",
        (wanted, pair.user_id, pair.character_id),
    )
    return Reply.of(cur, _turns)


async def purge(conn: AsyncConnection[Any], before: datetime) -> int:
    """Delete unpinned rows archived before `before` (the yearly retention)."""
    cur = await conn.execute(
        f"DELETE FROM {TABLE} WHERE archiviert_am < %s AND NOT angeheftet", (before,)
    )
    return cur.rowcount


async def set_pinned(
    conn: AsyncConnection[Any], pair: Pair, ids: Sequence[int] | None, pinned: bool
) -> int:
    """Pin (exempt from the purge) or unpin rows of the pair; `ids` None: all of them."""
    sql = f"UPDATE {TABLE} SET angeheftet = %s WHERE user_id = %s AND character_id = %s"
    params: list[Any] = [pinned, pair.user_id, pair.character_id]
    if ids is not None:
        sql += " AND id = ANY(%s)"
        params.append(list(ids))
    cur = await conn.execute(sql, params)
    return cur.rowcount


async def undistilled(
    conn: AsyncConnection[Any], pair: Pair, source: str, source_ids: Sequence[str]
) -> list[ArchivedTurn]:
    """Rows of these source ids not yet run through salience and condensing, in order."""
    cur = await conn.execute(
        f"SELECT {ROW_COLUMNS} FROM {TABLE} a WHERE a.user_id = %s AND a.character_id = %s"
        " AND a.quelle = %s AND a.quell_id = ANY(%s) AND a.destilliert_am IS NULL"
        " ORDER BY a.zeit, a.id",
        (pair.user_id, pair.character_id, source, list(source_ids)),
    )
    return _turns(await cur.fetchall())


async def mark_distilled(conn: AsyncConnection[Any], row_id: int, when: datetime) -> None:
    await conn.execute(f"UPDATE {TABLE} SET destilliert_am = %s WHERE id = %s", (when, row_id))


async def missing_vectors(conn: AsyncConnection[Any], limit: int) -> list[tuple[int, str]]:
    """(id, text) of rows whose embedding failed when they were written, oldest first."""
    cur = await conn.execute(
        f"SELECT a.id, a.inhalt AS text FROM {TABLE} a WHERE a.embedding IS NULL"
        " ORDER BY a.id LIMIT %s",
        (limit,),
    )
    return [(int(row["id"]), str(row["text"])) for row in await cur.fetchall()]


async def set_vector(conn: AsyncConnection[Any], row_id: int, vector: np.ndarray) -> None:
    """Fill a missing turn vector; its context view from the row before it."""
    await conn.execute(
        f"UPDATE {TABLE} a SET embedding = %(v)s, embedding_kontext = ("
        f"SELECT l2_normalize(%(v)s + p.embedding) FROM {TABLE} p"
        " WHERE p.user_id = a.user_id AND p.character_id = a.character_id"
        " AND p.zeit <= a.zeit AND p.id <> a.id AND p.embedding IS NOT NULL"
        " ORDER BY p.zeit DESC, p.id DESC LIMIT 1) WHERE a.id = %(id)s",
        {"v": _vector(vector), "id": row_id},
    )
