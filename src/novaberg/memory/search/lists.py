"""The ranked lists of a hybrid search: per layer the vector search, BM25 over PostgreSQL
full-text search and, for the archive, the trigram-corrected words of a misspelt name
(docs/behaviour/memory.md#hybrid-search). Every list the database answers is queued in one
pipeline; the short-term lists are ranked here over the pair's entries.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np
import redis.asyncio as aioredis
from psycopg import AsyncConnection

from novaberg.ei.canon import parse_number
from novaberg.memory.fusion import Fused
from novaberg.memory.search.results import (
    LAYER_ARCHIVE,
    LAYER_LIBRARY,
    LAYER_LONG_TERM,
    LAYER_SHORT_TERM,
    METHOD_CONTEXT,
    METHOD_LEXICAL,
    METHOD_SPEAKER,
    METHOD_TRIGRAM,
    METHOD_VECTOR,
    METHOD_WINDOW,
    SearchOptions,
)
from novaberg.pair import Pair
from novaberg.store import (
    archive,
    day_anchors,
    library,
    long_term_search,
    pipelined,
    text_search,
)
from novaberg.store.long_term_nodes import LongTermNode
from novaberg.store.pipelined import Reply
from novaberg.store.short_term import ShortTermEntry, ShortTermStore
from novaberg.store.short_term_fields import Field

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
ARCHIVE_SPEAKER: Final = f"{LAYER_ARCHIVE}/{METHOD_SPEAKER}"
LONG_TERM_VECTOR: Final = f"{LAYER_LONG_TERM}/{METHOD_VECTOR}"
LONG_TERM_LEXICAL: Final = f"{LAYER_LONG_TERM}/{METHOD_LEXICAL}"
SHORT_TERM_VECTOR: Final = f"{LAYER_SHORT_TERM}/{METHOD_VECTOR}"
SHORT_TERM_LEXICAL: Final = f"{LAYER_SHORT_TERM}/{METHOD_LEXICAL}"
LIBRARY_VECTOR: Final = f"{LAYER_LIBRARY}/{METHOD_VECTOR}"
LIBRARY_LEXICAL: Final = f"{LAYER_LIBRARY}/{METHOD_LEXICAL}"
LIST_ORDER: Final = (
    ARCHIVE_VECTOR,
    ARCHIVE_LEXICAL,
    TRIGRAM_LIST,
    ARCHIVE_SPEAKER,
    LONG_TERM_VECTOR,
    LONG_TERM_LEXICAL,
    SHORT_TERM_VECTOR,
    SHORT_TERM_LEXICAL,
    LIBRARY_VECTOR,
    LIBRARY_LEXICAL,
)
"""The ranked lists by name ("layer/method"), in the order the fusion meets them (its
ties keep that order)."""

Ranked = list[tuple[tuple[str, str], float]]


def _key(layer: str, ident: Any) -> tuple[str, str]:
    return (layer, str(ident))


def _ranked(layer: str, hits: Sequence[tuple[Any, float]]) -> Ranked:
    return [(_key(layer, ident), score) for ident, score in hits]


def _similar(hits: Ranked) -> Ranked:
    """A vector list without the hits at or below `VECTOR_MIN_COSINE`."""
    return [(key, cosine) for key, cosine in hits if cosine > VECTOR_MIN_COSINE]


def epoch(value: Any) -> datetime | None:
    """An entry's epoch-seconds field as a time (None: missing or unreadable)."""
    number = parse_number(value)
    return None if number is None else datetime.fromtimestamp(number, UTC)


def _in_window(moment: datetime | None, window: tuple[datetime, datetime] | None) -> bool:
    if window is None:
        return True
    return moment is not None and window[0] <= moment < window[1]


class RankedLists:
    """The lists of one search, and what they read that the details reuse (the pair's
    short-term entries, the long-term nodes a vector list found)."""

    def __init__(
        self,
        redis: aioredis.Redis,
        pair: Pair,
        options: SearchOptions,
        window: tuple[datetime, datetime] | None,
        query: str = "",
    ) -> None:
        self.redis = redis
        self.query = query
        self.pair = pair
        self.options = options
        self.window = window
        self.filters = archive.Filters(window, options.before, options.exclude_turn)
        self.entries: dict[str, ShortTermEntry] = {}
        self.nodes: dict[int, LongTermNode] = {}
        self.depth = max(LIST_DEPTH, options.limit)
        self.by_context: set[int] = set()
        """Archive rows whose better cosine came from the turn-with-predecessor view."""
        self.newest: Reply[list[tuple[int, float]]] | None = None
        """The window's newest turns, read with the lists (`window_fill`)."""
        self.restated: list[tuple[int, int, float]] = []
        """(older, newer, cosine) of archived hits one speaker said twice in near words
        (read with the details; memory/search/supersession.py)."""

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
            if entry.fields.get(Field.TEXT, "").strip()
            and (
                _timeline_id(entry) is not None  # about its row's day: `narrow_to_days`
                or _in_window(epoch(entry.fields.get(Field.CREATED_AT)), self.window)
            )
        ]
        self.entries = {entry.key: entry for entry in entries}

    async def narrow_to_days(self, conn: AsyncConnection[Any]) -> None:
        """Under a time window, keep the short-term entries *about* it: one with a timeline
        row (its day anchor, or the appointment its turn wrote) when that row's time lies
        in the window, one without when it was said in it (docs/behaviour/memory.md#day-recall).
        One query, only when an entry has a row."""
        if self.window is None:
            return
        linked = {_timeline_id(entry) for entry in self.entries.values()} - {None}
        on_day = await day_anchors.rows_in_window(
            conn, self.pair.user_id, (i for i in linked if i is not None), *self.window
        )
        self.entries = {
            key: entry
            for key, entry in self.entries.items()
            if (_timeline_id(entry) in on_day)
            or (
                _timeline_id(entry) is None
                and _in_window(epoch(entry.fields.get(Field.CREATED_AT)), self.window)
            )
        }

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
        if jobs or trigram or fills:  # an empty pipeline costs a round trip
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
            if terms.speakers and terms.selecting and self.wants(LAYER_ARCHIVE, METHOD_SPEAKER):
                jobs[ARCHIVE_SPEAKER] = lambda conn: self._archive_speaker(conn, terms)
        if vector is not None and self.wants(LAYER_LONG_TERM, METHOD_VECTOR):
            jobs[LONG_TERM_VECTOR] = lambda conn: self._long_term_vector(conn, vector)
        if terms.selecting and self.wants(LAYER_LONG_TERM, METHOD_LEXICAL):
            jobs[LONG_TERM_LEXICAL] = lambda conn: self._long_term_lexical(conn, terms)
        if self.entries and terms.selecting and self.wants(LAYER_SHORT_TERM, METHOD_LEXICAL):
            jobs[SHORT_TERM_LEXICAL] = lambda conn: self._short_term_lexical(conn, terms)
        if vector is not None and self.wants(LAYER_LIBRARY, METHOD_VECTOR):
            jobs[LIBRARY_VECTOR] = lambda conn: self._library_vector(conn, vector)
        if self.query.strip() and self.wants(LAYER_LIBRARY, METHOD_LEXICAL):
            jobs[LIBRARY_LEXICAL] = self._library_lexical
        return jobs

    async def _library_vector(
        self, conn: AsyncConnection[Any], vector: np.ndarray
    ) -> Reply[Ranked]:
        """The person's library by vector, queued with the other lists: the exact or the
        index plan is chosen in the database by her passage count (store/library.py)."""
        found = await library.queue_search_vector(conn, self.pair.user_id, vector, self.depth)
        return found.then(lambda hits: _similar(_ranked(LAYER_LIBRARY, hits)))

    async def _library_lexical(self, conn: AsyncConnection[Any]) -> Reply[Ranked]:
        """The person's library by words; a passage has no time, so a time window does not
        narrow it (docs/behaviour/library.md#search)."""
        found = await library.queue_search_words(conn, self.pair.user_id, self.query, self.depth)
        return found.then(lambda hits: _ranked(LAYER_LIBRARY, hits))

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
        nearest = sorted(best.items(), key=lambda item: -item[1])[: self.depth]
        return _similar(_ranked(LAYER_ARCHIVE, nearest))

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

    async def _archive_speaker(
        self, conn: AsyncConnection[Any], terms: text_search.QueryTerms
    ) -> Reply[Ranked]:
        """The turns of the speakers the query names, ranked by its words (the name's own
        lexeme matches each of them; the topic's words order them)."""
        hits = await archive.queue_lexical(
            conn,
            self.pair,
            terms,
            self.depth,
            filters=replace(self.filters, speakers=terms.speakers),
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
            Fused(key, 0.0, {f"{LAYER_ARCHIVE}/{METHOD_WINDOW}": (rank, moment)})
            for rank, (key, moment) in enumerate(_ranked(LAYER_ARCHIVE, newest), start=1)
            if key not in taken
        ]
        return [*fused, *extra[:wanted]]

    async def _short_term_lexical(
        self, conn: AsyncConnection[Any], terms: text_search.QueryTerms
    ) -> Reply[Ranked]:
        entries = list(self.entries.values())
        texts = [entry.fields.get(Field.TEXT, "") for entry in entries]
        hits = await text_search.queue_rank_texts(conn, texts, terms, self.depth)
        return hits.then(
            lambda found: [
                (_key(LAYER_SHORT_TERM, entries[index].key), score) for index, score in found
            ]
        )

    async def _long_term_vector(
        self, conn: AsyncConnection[Any], vector: np.ndarray
    ) -> Reply[Ranked]:
        nodes = await long_term_search.queue_nearest(
            conn, self.pair, vector, self.depth, active_only=not self.options.include_inactive
        )
        return nodes.then(self._long_term_ranked)

    def _long_term_ranked(self, nodes: list[LongTermNode]) -> Ranked:
        kept = [node for node in nodes if _in_window(node_day(node), self.window)]
        for node in kept:
            self.nodes[node.id] = node
        return _similar(
            [(_key(LAYER_LONG_TERM, node.id), float(node.cosine or 0.0)) for node in kept]
        )

    async def _long_term_lexical(
        self, conn: AsyncConnection[Any], terms: text_search.QueryTerms
    ) -> Reply[Ranked]:
        hits = await long_term_search.queue_lexical(
            conn,
            self.pair,
            terms,
            self.depth,
            active_only=not self.options.include_inactive,
            window=self.window,
        )
        return hits.then(lambda found: _ranked(LAYER_LONG_TERM, found))


def _timeline_id(entry: ShortTermEntry) -> int | None:
    number = parse_number(entry.fields.get(Field.TIMELINE_ID))
    return None if number is None else int(number)


def node_day(node: LongTermNode) -> datetime | None:
    """When a node is about: its timeline row's time (a day anchor, an appointment), else
    when it was said."""
    return node.timeline_time if node.timeline_id is not None else node_time(node)


def node_time(node: LongTermNode) -> datetime | None:
    """When a node was said: when its short-term entry was made, else when it was created."""
    return node.short_term_created_at or node.created_at


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
