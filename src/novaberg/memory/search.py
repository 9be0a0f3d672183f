"""Hybrid search over a pair's whole memory — archive, short-term and long-term — with
provenance. The one function people (`novaberg memory search`, `GET /memory/{c}/search`),
the enricher and tools call: `search_memory`.

Per layer several ranked lists are made: the vector search (for the archive in two views,
the turn alone and the turn with its predecessor, merged into one list), BM25 over
PostgreSQL full-text search (`lexikalisch`, store/text_search.py; for the archive also by
the words of the turn before) and, for name-like query words the archive never saw, the
lexemes of the pair's vocabulary they resemble by pg_trgm similarity (`trigramm`: a misspelt
name). Reciprocal rank fusion (memory/fusion.py)
merges all lists of all layers into one ranking. A time expression in the query ("letzten
Sommer", "im März") narrows every layer to that window (memory/time_expressions/windows.py);
if fewer hits than asked remain, the window's newest turns fill up (`zeitraum`). Every hit
names what it rests on (`sources`): archive
rows with their turn id, nachrichten_ids and imported id; a short-term entry and the turn it
was condensed from; a long-term node, the short-term keys it was promoted from and their
turns (or the character card a lore entry came from).

No model call except the query's embedding; nothing is reinforced or marked as used (this
is a look-up, not a turn's retrieval): docs/behaviour/memory.md#hybrid-search.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

import numpy as np
import redis.asyncio as aioredis
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.ei.canon import parse_number
from novaberg.llm.base import LLM
from novaberg.llm.errors import ModelError
from novaberg.memory.context import SOURCE_LONG_TERM, SOURCE_SHORT_TERM
from novaberg.memory.fusion import Fused, reciprocal_rank_fusion
from novaberg.memory.time_expressions.windows import TimeWindow, query_window
from novaberg.pair import Pair
from novaberg.store import archive, pipelined, text_search
from novaberg.store import long_term as long_term_store
from novaberg.store.pipelined import Reply
from novaberg.store.short_term import ShortTermEntry, ShortTermStore

log = logging.getLogger(__name__)

LAYER_ARCHIVE: Final = "archiv"
LAYER_SHORT_TERM: Final = SOURCE_SHORT_TERM
LAYER_LONG_TERM: Final = SOURCE_LONG_TERM
LAYER_CARD: Final = "karte"
"""`layer` of hits and sources (a card is only ever a source: of a lore node)."""
ALL_LAYERS: Final = frozenset({LAYER_ARCHIVE, LAYER_SHORT_TERM, LAYER_LONG_TERM})

METHOD_VECTOR: Final = "vektor"
METHOD_CONTEXT: Final = "kontext"
METHOD_LEXICAL: Final = "lexikalisch"
METHOD_TRIGRAM: Final = "trigramm"
METHOD_WINDOW: Final = "zeitraum"
"""What a search may use (`signals` of a hit name the lists that found it). `kontext`: the
second view of archived turns, for vectors and words alike. The two vector views of an
archived turn make one list (its better cosine; the signal names the view that won); the
context view of the words adds each matched turn's successor to the words' list at half
its score (store/archive.py, `CONTEXT_WORD_SHARE`).
`zeitraum`: when the query names a time and the lists found fewer hits than asked, the
window's newest turns fill up the result."""
SIGNAL_VECTOR_CONTEXT: Final = "vektor_kontext"
"""The signal of an archived turn whose better cosine came from its context view."""
ALL_METHODS: Final = frozenset(
    {METHOD_VECTOR, METHOD_CONTEXT, METHOD_LEXICAL, METHOD_TRIGRAM, METHOD_WINDOW}
)

LIST_DEPTH: Final = 20
"""Candidates each list contributes to the fusion (more when more hits are asked for).
Measured (bench/memory_recall.py, bundled embedder): 20 instead of 50 raised recall@10 by
1–2 points — deep lists let mediocre matches collect votes from several lists and outrank
one list's best — and shortens every query."""

VECTOR_MIN_COSINE: Final = 0.1
"""Vector hits at or below this cosine do not enter the fusion: a vector list ranks every
row, and below it the order is noise (unrelated texts; the hashed test embedder gives them
exactly 0) that would outvote a single real match of the words."""

ARCHIVE_VECTOR: Final = f"{LAYER_ARCHIVE}/{METHOD_VECTOR}"
ARCHIVE_LEXICAL: Final = f"{LAYER_ARCHIVE}/{METHOD_LEXICAL}"
TRIGRAM_LIST: Final = f"{LAYER_ARCHIVE}/{METHOD_TRIGRAM}"
LONG_TERM_VECTOR: Final = f"{LAYER_LONG_TERM}/{METHOD_VECTOR}"
LONG_TERM_LEXICAL: Final = f"{LAYER_LONG_TERM}/{METHOD_LEXICAL}"
SHORT_TERM_VECTOR: Final = f"{LAYER_SHORT_TERM}/{METHOD_VECTOR}"
SHORT_TERM_LEXICAL: Final = f"{LAYER_SHORT_TERM}/{METHOD_LEXICAL}"
LIST_ORDER: Final = (
    ARCHIVE_VECTOR,
    ARCHIVE_LEXICAL,
    TRIGRAM_LIST,
    LONG_TERM_VECTOR,
    LONG_TERM_LEXICAL,
    SHORT_TERM_VECTOR,
    SHORT_TERM_LEXICAL,
)
"""The ranked lists by name ("layer/method"), in the order the fusion meets them (its
ties keep that order)."""

CARD_KEY_PREFIX: Final = "karte:"
"""`kzg_quell_key` prefix of long-term nodes made from a character card's lorebook."""

Ranked = list[tuple[tuple[str, str], float]]


@dataclass(frozen=True, slots=True)
class Source:
    """One thing a hit rests on."""

    layer: str
    id: str
    turn_id: str | None = None
    message_ids: tuple[str, ...] = ()
    source_id: str | None = None
    speaker: str | None = None
    time: datetime | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "id": self.id,
            "turn_id": self.turn_id,
            "nachrichten_ids": list(self.message_ids),
            "source_id": self.source_id,
            "speaker": self.speaker,
            "time": self.time.isoformat() if self.time else None,
        }


@dataclass(slots=True)
class MemoryHit:
    """One fused result: its layer and id there, fused score, text, time and provenance;
    `signals`: per list it was found in, (rank, score) there."""

    layer: str
    id: str
    score: float
    text: str
    time: datetime | None
    sources: list[Source] = field(default_factory=list)
    signals: dict[str, tuple[int, float]] = field(default_factory=dict)
    speaker: str | None = None

    def as_json(self, rank: int) -> dict[str, Any]:
        """The object `--json` prints and the search endpoint returns."""
        return {
            "rank": rank,
            "layer": self.layer,
            "id": self.id,
            "score": round(self.score, 6),
            "text": self.text,
            "time": self.time.isoformat() if self.time else None,
            "speaker": self.speaker,
            "sources": [source.as_json() for source in self.sources],
            "signals": {
                name: {"rank": r, "score": round(s, 6)} for name, (r, s) in self.signals.items()
            },
        }

    def best_cosine(self) -> float | None:
        """The highest cosine a vector list gave it (None: found by words only)."""
        values = [
            s for n, (_, s) in self.signals.items() if n in (METHOD_VECTOR, SIGNAL_VECTOR_CONTEXT)
        ]
        return max(values) if values else None

    def found_by_words(self) -> bool:
        return any(name in (METHOD_LEXICAL, METHOD_TRIGRAM) for name in self.signals)


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """What to search. `before`/`exclude_turn`: leave out archive rows said at or after
    that time / of that turn (the enricher: what the session already holds)."""

    limit: int = 10
    layers: frozenset[str] = ALL_LAYERS
    methods: frozenset[str] = ALL_METHODS
    include_inactive: bool = False
    narrow_by_time: bool = True
    before: datetime | None = None
    exclude_turn: str | None = None
    skip: frozenset[tuple[str, str]] = frozenset()
    """(layer, method) lists to leave out (the enricher: the long-term vectors, which its
    spreading read covers)."""


@dataclass(slots=True)
class SearchResult:
    hits: list[MemoryHit]
    window: TimeWindow | None
    embedded: bool
    """False when the query could not be embedded (then only words were searched)."""


def _key(layer: str, ident: Any) -> tuple[str, str]:
    return (layer, str(ident))


def _ranked(layer: str, hits: Sequence[tuple[Any, float]]) -> Ranked:
    return [(_key(layer, ident), score) for ident, score in hits]


def _similar(hits: Ranked) -> Ranked:
    """A vector list without the hits at or below `VECTOR_MIN_COSINE`."""
    return [(key, cosine) for key, cosine in hits if cosine > VECTOR_MIN_COSINE]


def _epoch(value: Any) -> datetime | None:
    number = parse_number(value)
    return None if number is None else datetime.fromtimestamp(number, UTC)


def _in_window(moment: datetime | None, window: tuple[datetime, datetime] | None) -> bool:
    if window is None:
        return True
    return moment is not None and window[0] <= moment < window[1]


async def _embed(model: LLM, query: str) -> np.ndarray | None:
    try:
        return np.asarray((await model.embed([query]))[0], dtype=np.float32)
    except (ModelError, OSError, RuntimeError) as exc:
        log.error("memory search: the query could not be embedded (%s); words only", exc)
        return None


class _Search:
    """One search: the lists of every layer, fused, then the details of the top hits."""

    def __init__(
        self,
        redis: aioredis.Redis,
        pair: Pair,
        options: SearchOptions,
        window: tuple[datetime, datetime] | None,
    ) -> None:
        self.redis = redis
        self.pair = pair
        self.options = options
        self.window = window
        self.filters = archive.Filters(window, options.before, options.exclude_turn)
        self.entries: dict[str, ShortTermEntry] = {}
        self.nodes: dict[int, dict[str, Any]] = {}
        self.depth = max(LIST_DEPTH, options.limit)
        self.by_context: set[int] = set()
        """Archive rows whose better cosine came from the turn-with-predecessor view."""
        self.newest: Reply[list[tuple[int, float]]] | None = None
        """The window's newest turns, read with the lists (`window_fill`)."""

    def wants(self, layer: str, method: str) -> bool:
        return (
            layer in self.options.layers
            and method in self.options.methods
            and (layer, method) not in self.options.skip
        )

    async def read_short_term(self) -> None:
        """The pair's short-term entries (one Redis read; both short-term lists use it)."""
        if LAYER_SHORT_TERM not in self.options.layers:
            return
        entries = [
            entry
            for entry in await ShortTermStore(self.redis, cache_vectors=False).entries(
                self.pair, with_ttl=False
            )
            if entry.fields.get("inhalt", "").strip()
            and _in_window(_epoch(entry.fields.get("erstellt_am")), self.window)
        ]
        self.entries = {entry.key: entry for entry in entries}

    async def lists(
        self, conn: AsyncConnection[Any], vector: np.ndarray | None, terms: text_search.QueryTerms
    ) -> dict[str, Ranked]:
        """Every ranked list of every layer, in the order the fusion breaks ties by
        (`LIST_ORDER`): the statements of all queued in one pipeline on `conn`, one round
        trip (`store/pipelined.py`); a misspelt name's corrected query costs one more.
        Under a time window the window's newest turns go with them (`window_fill`)."""
        jobs = self._jobs(vector, terms)
        trigram = (
            bool(terms.rows and terms.unknown_words)
            and LAYER_ARCHIVE in self.options.layers
            and self.wants(LAYER_ARCHIVE, METHOD_TRIGRAM)
        )
        replies: dict[str, Reply[Ranked]] = {}
        corrected: Reply[text_search.QueryTerms | None] = Reply.ready(None)
        fills = self.window is not None and self.wants(LAYER_ARCHIVE, METHOD_WINDOW)
        if jobs or trigram or fills:  # an empty pipeline would still cost a round trip
            async with pipelined.pipeline(conn):
                for name, queue in jobs.items():
                    replies[name] = await queue(conn)
                if trigram:
                    corrected = await text_search.queue_corrected_terms(conn, self.pair, terms)
                if fills:  # read before it is known to be needed: a round trip less
                    self.newest = await archive.queue_in_window(
                        conn, self.pair, self.options.limit, filters=self.filters
                    )
        found = {name: await reply.read() for name, reply in replies.items()}
        if trigram:
            found[TRIGRAM_LIST] = await self._archive_trigram(conn, await corrected.read())
        entries = list(self.entries.values())
        if entries and vector is not None and self.wants(LAYER_SHORT_TERM, METHOD_VECTOR):
            found[SHORT_TERM_VECTOR] = _similar(_short_term_vector(entries, vector, self.depth))
        return {name: found[name] for name in LIST_ORDER if name in found}

    def _jobs(
        self, vector: np.ndarray | None, terms: text_search.QueryTerms
    ) -> dict[str, Callable[[AsyncConnection[Any]], Awaitable[Reply[Ranked]]]]:
        """The lists read from the database, each as what queues its statements: only
        those with something to look up (a list without selecting words is empty)."""
        jobs: dict[str, Callable[[AsyncConnection[Any]], Awaitable[Reply[Ranked]]]] = {}
        candidates = (terms.window_rows if self.window is not None else terms.rows) or 0
        if terms.rows and LAYER_ARCHIVE in self.options.layers:
            views = [archive.VIEW_TURN]
            if self.wants(LAYER_ARCHIVE, METHOD_CONTEXT):
                views.append(archive.VIEW_CONTEXT)
            if vector is not None and self.wants(LAYER_ARCHIVE, METHOD_VECTOR):
                jobs[ARCHIVE_VECTOR] = lambda conn: self._archive_vector(
                    conn, vector, views, candidates
                )
            if terms.selecting and self.wants(LAYER_ARCHIVE, METHOD_LEXICAL):
                jobs[ARCHIVE_LEXICAL] = lambda conn: self._archive_lexical(conn, terms)
        if vector is not None and self.wants(LAYER_LONG_TERM, METHOD_VECTOR):
            jobs[LONG_TERM_VECTOR] = lambda conn: self._long_term_vector(conn, vector)
        if terms.selecting and self.wants(LAYER_LONG_TERM, METHOD_LEXICAL):
            jobs[LONG_TERM_LEXICAL] = lambda conn: self._long_term_lexical(conn, terms)
        if self.entries and terms.selecting and self.wants(LAYER_SHORT_TERM, METHOD_LEXICAL):
            jobs[SHORT_TERM_LEXICAL] = lambda conn: self._short_term_lexical(conn, terms)
        return jobs

    async def _archive_vector(
        self, conn: AsyncConnection[Any], vector: np.ndarray, views: list[str], candidates: int
    ) -> Reply[Ranked]:
        """One list for both views of a turn: each row ranked by its better cosine (a
        second list per view would give the vectors two votes against the words' one)."""
        found = await archive.queue_nearest_views(
            conn,
            self.pair,
            vector,
            self.depth,
            views=views,
            filters=self.filters,
            candidates=candidates,
        )
        return found.then(lambda views_found: self._best_view(views, views_found))

    def _best_view(self, views: list[str], found: dict[str, list[tuple[int, float]]]) -> Ranked:
        best: dict[int, float] = {}
        for view in views:
            for ident, cosine in found[view]:
                if cosine > best.get(ident, -2.0):
                    best[ident] = cosine
                    if view == archive.VIEW_CONTEXT:
                        self.by_context.add(ident)
                    else:
                        self.by_context.discard(ident)
        ranked = sorted(best.items(), key=lambda item: -item[1])[: self.depth]
        return _similar(_ranked(LAYER_ARCHIVE, ranked))

    async def _archive_lexical(
        self, conn: AsyncConnection[Any], terms: text_search.QueryTerms
    ) -> Reply[Ranked]:
        hits = await archive.queue_lexical(
            conn,
            self.pair,
            terms,
            self.depth,
            filters=self.filters,
            with_next=self.wants(LAYER_ARCHIVE, METHOD_CONTEXT),
        )
        return hits.then(lambda found: _ranked(LAYER_ARCHIVE, found))

    async def _archive_trigram(
        self, conn: AsyncConnection[Any], corrected: text_search.QueryTerms | None
    ) -> Ranked:
        """Rows with the vocabulary's lexemes that misspelt name-like words resemble."""
        if corrected is None:
            return []
        hits = await archive.lexical(conn, self.pair, corrected, self.depth, filters=self.filters)
        return _ranked(LAYER_ARCHIVE, hits)

    async def window_fill(
        self, conn: AsyncConnection[Any], fused: list[Fused[tuple[str, str]]]
    ) -> list[Fused[tuple[str, str]]]:
        """Under a time window with fewer hits than asked for, the window's newest turns
        follow the fused hits (signal `zeitraum`): "what did I say last summer" is answered
        even where nothing matches. They never outrank a hit (as a fused list of their own,
        measured, they pushed matching turns out)."""
        wanted = self.options.limit - len(fused)
        if self.window is None or wanted <= 0 or not self.wants(LAYER_ARCHIVE, METHOD_WINDOW):
            return fused
        taken = {item.key for item in fused}
        newest = await (
            self.newest.read()
            if self.newest is not None
            else archive.in_window(conn, self.pair, self.options.limit, filters=self.filters)
        )
        extra = [
            Fused(key, 0.0, {f"{LAYER_ARCHIVE}/{METHOD_WINDOW}": (rank, epoch)})
            for rank, (key, epoch) in enumerate(_ranked(LAYER_ARCHIVE, newest), start=1)
            if key not in taken
        ]
        return [*fused, *extra[:wanted]]

    async def _short_term_lexical(
        self, conn: AsyncConnection[Any], terms: text_search.QueryTerms
    ) -> Reply[Ranked]:
        entries = list(self.entries.values())
        texts = [entry.fields.get("inhalt", "") for entry in entries]
        hits = await text_search.queue_rank_texts(conn, texts, terms, self.depth)
        return hits.then(
            lambda found: [
                (_key(LAYER_SHORT_TERM, entries[index].key), score) for index, score in found
            ]
        )

    async def _long_term_vector(
        self, conn: AsyncConnection[Any], vector: np.ndarray
    ) -> Reply[Ranked]:
        rows = await long_term_store.queue_nearest(
            conn, self.pair, vector, self.depth, active_only=not self.options.include_inactive
        )
        return rows.then(self._long_term_ranked)

    def _long_term_ranked(self, rows: list[dict[str, Any]]) -> Ranked:
        kept = [row for row in rows if _in_window(_node_time(row), self.window)]
        for row in kept:
            self.nodes[int(row["id"])] = dict(row)
        return _similar([(_key(LAYER_LONG_TERM, row["id"]), float(row["cosine"])) for row in kept])

    async def _long_term_lexical(
        self, conn: AsyncConnection[Any], terms: text_search.QueryTerms
    ) -> Reply[Ranked]:
        hits = await long_term_store.queue_lexical(
            conn,
            self.pair,
            terms,
            self.depth,
            active_only=not self.options.include_inactive,
            window=self.window,
        )
        return hits.then(lambda found: _ranked(LAYER_LONG_TERM, found))

    async def details(
        self, conn: AsyncConnection[Any], fused: list[Fused[tuple[str, str]]]
    ) -> list[MemoryHit]:
        """The top hits with their text, time and sources: one pipelined round trip, and
        one more for the archive rows of the turns long-term hits were promoted from."""
        wanted: dict[str, list[str]] = {layer: [] for layer in ALL_LAYERS}
        for item in fused:
            layer, ident = item.key
            wanted[layer].append(ident)
        missing = [int(i) for i in wanted[LAYER_LONG_TERM] if int(i) not in self.nodes]
        short_turns = {
            self.entries[key].fields.get("turn_id", "")
            for key in wanted[LAYER_SHORT_TERM]
            if key in self.entries
        }
        short_turns.discard("")
        queued = wanted[LAYER_ARCHIVE] or wanted[LAYER_LONG_TERM] or short_turns
        async with pipelined.pipeline(conn) if queued else nullcontext():
            rows_reply = await archive.queue_rows_by_id(
                conn, (int(i) for i in wanted[LAYER_ARCHIVE])
            )
            nodes_reply = await long_term_store.queue_nodes_by_id(conn, missing)
            keys_reply = await long_term_store.queue_source_keys(
                conn, (int(i) for i in wanted[LAYER_LONG_TERM])
            )
            short_reply = await archive.queue_rows_by_turn(conn, self.pair, short_turns)
        rows = await rows_reply.read()
        self.nodes.update(await nodes_reply.read())
        node_keys = await keys_reply.read()
        turn_rows = await short_reply.read()
        node_turns = {r["turn_id"] for r in node_keys if r["turn_id"]} - short_turns
        if node_turns:
            more = await archive.queue_rows_by_turn(conn, self.pair, node_turns)
            turn_rows += await more.read()
        by_turn: dict[str, list[dict[str, Any]]] = {}
        for row in turn_rows:
            by_turn.setdefault(str(row["turn_id"]), []).append(row)
        keys_of: dict[int, list[dict[str, Any]]] = {}
        for row in node_keys:
            keys_of.setdefault(int(row["lzg_id"]), []).append(row)
        hits: list[MemoryHit] = []
        for item in fused:
            layer, ident = item.key
            hit = self._hit(layer, ident, rows, by_turn, keys_of)
            if hit is None:
                continue
            hit.score = item.score
            hit.signals = {name.split("/", 1)[1]: value for name, value in item.signals.items()}
            if (
                layer == LAYER_ARCHIVE
                and int(ident) in self.by_context
                and METHOD_VECTOR in hit.signals
            ):
                hit.signals[SIGNAL_VECTOR_CONTEXT] = hit.signals.pop(METHOD_VECTOR)
            hits.append(hit)
        return hits

    def _hit(
        self,
        layer: str,
        ident: str,
        rows: dict[int, dict[str, Any]],
        by_turn: dict[str, list[dict[str, Any]]],
        keys_of: dict[int, list[dict[str, Any]]],
    ) -> MemoryHit | None:
        if layer == LAYER_ARCHIVE:
            row = rows.get(int(ident))
            if row is None:  # purged between the lists and the details
                return None
            return MemoryHit(
                layer,
                ident,
                0.0,
                row["inhalt"],
                row["zeit"],
                [_archive_source(row)],
                speaker=row["sprecher"],
            )
        if layer == LAYER_SHORT_TERM:
            entry = self.entries.get(ident)
            if entry is None:
                return None
            turn = entry.fields.get("turn_id") or None
            sources = [Source(LAYER_SHORT_TERM, ident, turn_id=turn)]
            sources += _turn_sources(by_turn, turn, entry.fields.get("beobachter"))
            return MemoryHit(
                layer,
                ident,
                0.0,
                entry.fields.get("inhalt", ""),
                _epoch(entry.fields.get("erstellt_am")),
                sources,
            )
        node = self.nodes.get(int(ident))
        if node is None:
            return None
        sources = [Source(LAYER_LONG_TERM, ident)]
        for link in keys_of.get(int(ident), []):
            key = str(link["kzg_key"])
            if key.startswith(CARD_KEY_PREFIX):
                sources.append(Source(LAYER_CARD, key))
                continue
            sources.append(Source(LAYER_SHORT_TERM, key, turn_id=link["turn_id"]))
            sources += _turn_sources(by_turn, link["turn_id"], node.get("beobachter"))
        return MemoryHit(layer, ident, 0.0, node["inhalt"], _node_time(node), sources)


def _node_time(node: dict[str, Any]) -> datetime | None:
    return node.get("kzg_erstellt_am") or node.get("erstellt_am")


def _archive_source(row: dict[str, Any]) -> Source:
    imported = row["quelle"] != archive.SOURCE_LIVE
    return Source(
        LAYER_ARCHIVE,
        str(row["id"]),
        turn_id=row["turn_id"],
        message_ids=tuple(row["nachrichten_ids"] or ()),
        source_id=row["quell_id"] if imported else None,
        speaker=row["sprecher"],
        time=row["zeit"],
    )


def _turn_sources(
    by_turn: dict[str, list[dict[str, Any]]], turn_id: str | None, observer: str | None
) -> list[Source]:
    """The archive rows of the turn an entry was condensed from: the speaker it observed
    (the user's words for `user`, the character's for `assistant`), else the whole turn."""
    rows = by_turn.get(turn_id or "", [])
    speaker = archive.SPEAKER_CHARACTER if observer == "assistant" else archive.SPEAKER_USER
    own = [row for row in rows if row["sprecher"] == speaker]
    return [_archive_source(row) for row in own or rows]


def _short_term_vector(entries: list[ShortTermEntry], vector: np.ndarray, depth: int) -> Ranked:
    """Exact cosine over the pair's entries (a pair has hundreds at most: no index)."""
    with_vectors = [entry for entry in entries if entry.vector is not None]
    vectors: list[np.ndarray] = [entry.vector for entry in with_vectors if entry.vector is not None]
    if not vectors:
        return []
    matrix = np.vstack(vectors).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(vector))
    cosines = (matrix @ vector) / np.where(norms == 0, 1.0, norms)
    order = np.argsort(-cosines)[:depth]
    return [(_key(LAYER_SHORT_TERM, with_vectors[i].key), float(cosines[i])) for i in order]


async def search_memory(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    query: str,
    *,
    now: datetime,
    tz: ZoneInfo,
    options: SearchOptions = SearchOptions(),
    vector: Sequence[float] | np.ndarray | None = None,
) -> SearchResult:
    """The pair's best `options.limit` memories for `query`, fused over layers and methods,
    each with its sources. `vector`: the query's embedding if the caller has it already."""
    window = query_window(query, now, tz) if options.narrow_by_time else None
    span = (window.start, window.end) if window is not None else None
    wants_vector = METHOD_VECTOR in options.methods
    query_vector: np.ndarray | None = None
    if wants_vector:
        query_vector = (
            np.asarray(vector, dtype=np.float32)
            if vector is not None
            else await _embed(model, query)
        )
    search = _Search(redis, pair, options, span)
    short_term = asyncio.ensure_future(search.read_short_term())  # Redis, meanwhile
    try:
        async with pool.connection() as conn:  # one connection, its reads pipelined
            terms = await text_search.query_terms(
                conn, pair, query, window=span, count_limit=archive.EXACT_LIMIT
            )
            await short_term
            lists = await search.lists(conn, query_vector, terms)
            fused = await search.window_fill(conn, reciprocal_rank_fusion(lists)[: options.limit])
            hits = await search.details(conn, fused)
    finally:
        short_term.cancel()  # nothing once done; a failed search leaves no read behind
    return SearchResult(hits, window, query_vector is not None or not wants_vector)
