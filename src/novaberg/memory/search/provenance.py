"""The details of a hybrid search's top hits: text, time and what each rests on
(docs/behaviour/memory.md#hybrid-search). Archive rows name their turn, message ids and
imported id; a short-term entry names the turn it was condensed from; a long-term node the
short-term keys it was promoted from and their turns, or the character card a lore entry
came from; a library passage its file, page, heading path and lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

from psycopg import AsyncConnection

from novaberg.memory.fusion import Fused
from novaberg.memory.library.search import source_of
from novaberg.memory.search.lists import RankedLists, epoch, node_time
from novaberg.memory.search.results import (
    ALL_LAYERS,
    CARD_KEY_PREFIX,
    LAYER_ARCHIVE,
    LAYER_CARD,
    LAYER_LIBRARY,
    LAYER_LONG_TERM,
    LAYER_SHORT_TERM,
    METHOD_VECTOR,
    SIGNAL_VECTOR_CONTEXT,
    MemoryHit,
    Source,
)
from novaberg.store import archive, library, long_term_nodes, long_term_provenance, pipelined
from novaberg.store.archive import ArchivedTurn
from novaberg.store.library import StoredChunk
from novaberg.store.long_term_provenance import NodeSource
from novaberg.store.short_term_fields import OBSERVER_ASSISTANT, EntryFields


async def details(
    conn: AsyncConnection[Any],
    lists: RankedLists,
    fused: list[Fused[tuple[str, str]]],
    *,
    restated: tuple[Sequence[str], float] | None = None,
) -> list[MemoryHit]:
    """The top hits with their text, time and sources: one pipelined round trip, and
    one more for the archive rows of the turns long-term hits were promoted from.
    `restated` (the query's selecting lexemes, a minimum cosine): also find which archived
    hits look like one fact told twice (`lists.restated`, memory/search/supersession.py),
    in the same round trip."""
    wanted: dict[str, list[str]] = {layer: [] for layer in ALL_LAYERS}
    for item in fused:
        layer, ident = item.key
        wanted[layer].append(ident)
    missing = [int(i) for i in wanted[LAYER_LONG_TERM] if int(i) not in lists.nodes]
    short_turns = {
        turn
        for key in wanted[LAYER_SHORT_TERM]
        if key in lists.entries and (turn := EntryFields.of(lists.entries[key].fields).turn_id)
    }
    queued = wanted[LAYER_ARCHIVE] or wanted[LAYER_LONG_TERM] or short_turns
    queued = queued or wanted[LAYER_LIBRARY]
    async with pipelined.pipeline(conn) if queued else nullcontext():
        rows_reply = await archive.queue_rows_by_id(conn, (int(i) for i in wanted[LAYER_ARCHIVE]))
        passages_reply = await library.queue_chunks_by_id(
            conn, [int(i) for i in wanted[LAYER_LIBRARY]]
        )
        nodes_reply = await long_term_nodes.queue_nodes_by_id(conn, missing)
        keys_reply = await long_term_provenance.queue_source_keys(
            conn, (int(i) for i in wanted[LAYER_LONG_TERM])
        )
        short_reply = await archive.queue_rows_by_turn(conn, lists.pair, short_turns)
        restated_reply = (
            await archive.queue_restated(conn, (int(i) for i in wanted[LAYER_ARCHIVE]), *restated)
            if restated is not None
            else None
        )
    rows = await rows_reply.read()
    passages = await passages_reply.read()
    if restated_reply is not None:
        lists.restated = await restated_reply.read()
    lists.nodes.update(await nodes_reply.read())
    node_keys = await keys_reply.read()
    turn_rows = await short_reply.read()
    node_turns = {source.turn_id for source in node_keys if source.turn_id} - short_turns
    if node_turns:
        more = await archive.queue_rows_by_turn(conn, lists.pair, node_turns)
        turn_rows += await more.read()
    by_turn: dict[str, list[ArchivedTurn]] = {}
    for row in turn_rows:
        by_turn.setdefault(str(row.turn_id), []).append(row)
    keys_of: dict[int, list[NodeSource]] = {}
    for source in node_keys:
        keys_of.setdefault(source.node_id, []).append(source)
    hits: list[MemoryHit] = []
    for item in fused:
        layer, ident = item.key
        hit = (
            _passage(passages, ident)
            if layer == LAYER_LIBRARY
            else _hit(lists, layer, ident, rows, by_turn, keys_of)
        )
        if hit is None:
            continue
        hit.score = item.score
        hit.signals = {name.split("/", 1)[1]: value for name, value in item.signals.items()}
        if (
            layer == LAYER_ARCHIVE
            and int(ident) in lists.by_context
            and METHOD_VECTOR in hit.signals
        ):
            hit.signals[SIGNAL_VECTOR_CONTEXT] = hit.signals.pop(METHOD_VECTOR)
        hits.append(hit)
    return hits


def _hit(
    lists: RankedLists,
    layer: str,
    ident: str,
    rows: dict[int, ArchivedTurn],
    by_turn: dict[str, list[ArchivedTurn]],
    keys_of: dict[int, list[NodeSource]],
) -> MemoryHit | None:
    if layer == LAYER_ARCHIVE:
        row = rows.get(int(ident))
        if row is None:  # purged between the lists and the details
            return None
        return MemoryHit(
            layer,
            ident,
            0.0,
            row.text,
            row.time,
            [_archive_source(row)],
            speaker=row.speaker,
            speaker_name=row.name,
        )
    if layer == LAYER_SHORT_TERM:
        stored = lists.entries.get(ident)
        if stored is None:
            return None
        entry = EntryFields.of(stored.fields)
        sources = [Source(LAYER_SHORT_TERM, ident, turn_id=entry.turn_id)]
        sources += _turn_sources(by_turn, entry.turn_id, entry.observer)
        return MemoryHit(layer, ident, 0.0, entry.text, epoch(entry.created_at), sources)
    node = lists.nodes.get(int(ident))
    if node is None:
        return None
    sources = [Source(LAYER_LONG_TERM, ident)]
    for link in keys_of.get(int(ident), []):
        key = link.short_term_key
        if key.startswith(CARD_KEY_PREFIX):
            sources.append(Source(LAYER_CARD, key))
            continue
        sources.append(Source(LAYER_SHORT_TERM, key, turn_id=link.turn_id))
        sources += _turn_sources(by_turn, link.turn_id, node.observer)
    return MemoryHit(layer, ident, 0.0, node.text, node_time(node), sources)


def _passage(passages: dict[int, StoredChunk], ident: str) -> MemoryHit | None:
    stored = passages.get(int(ident))
    if stored is None:  # its file changed or its folder was revoked meanwhile
        return None
    return MemoryHit(LAYER_LIBRARY, ident, 0.0, stored.text, None, [source_of(stored)])


def _archive_source(row: ArchivedTurn) -> Source:
    imported = row.source != archive.SOURCE_LIVE
    return Source(
        LAYER_ARCHIVE,
        str(row.id),
        turn_id=row.turn_id,
        message_ids=tuple(row.message_ids),
        source_id=row.source_id if imported else None,
        speaker=row.speaker,
        time=row.time,
        speaker_name=row.name,
    )


def _turn_sources(
    by_turn: dict[str, list[ArchivedTurn]], turn_id: str | None, observer: str | None
) -> list[Source]:
    """The archive rows of the turn an entry was condensed from: the speaker it observed
    (the user's words for `user`, the character's for `assistant`), else the whole turn."""
    rows = by_turn.get(turn_id or "", [])
    speaker = archive.SPEAKER_CHARACTER if observer == OBSERVER_ASSISTANT else archive.SPEAKER_USER
    own = [row for row in rows if row.speaker == speaker]
    return [_archive_source(row) for row in own or rows]
