"""Storing an imported chat in the archive: embedding only, no model call.

Turns are written in batches (store/archive.py: one transaction per batch, `ON CONFLICT DO
NOTHING` on the source's id), so an interrupted import keeps the batches it finished and a
second run stores only what is missing: resumable and idempotent. Turns already stored are
not embedded again. Each new turn's context view is the normalised sum of its vector and its
predecessor's in the same conversation (from this batch, the run, or the archive).

Before the first batch, the archive quota is checked (`NOVABERG_MAX_ARCHIVE_TURNS`, all the
user's pairs): an import whose new turns would pass it is refused whole (`QuotaFull`) and
stores nothing. Live turns are archived whatever the count — a conversation does not stop —
so only imports are refused, and the count they see includes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from psycopg_pool import AsyncConnectionPool

from novaberg.imports.chat_formats import ImportedTurn, ParsedChat, Problem
from novaberg.imports.limits import QuotaFull, setting_name
from novaberg.llm.base import LLM
from novaberg.pair import Pair
from novaberg.store import archive
from novaberg.store.text_search import text_configs

BATCH: Final = 64
"""Turns per embedding call and per transaction: large enough that a 100 000-turn import
is dominated by the index updates, small enough that an interruption loses little."""

IMPORT_TURN_PREFIX: Final = "import:"
"""`turn_id` of an imported row: "import:{format}:{source id}" — what a short-term entry
condensed from it (`--distil`) names as its turn, so provenance finds the row."""


@dataclass
class ImportReport:
    format: str
    turns: int
    new: int = 0
    existing: int = 0
    ignored: int = 0
    problems: list[Problem] = field(default_factory=list)
    """The first `chat_formats.PROBLEMS_LISTED` skipped places."""
    problem_count: int = 0
    source_ids: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "format": self.format,
            "turns": self.turns,
            "neu": self.new,
            "vorhanden": self.existing,
            "ignoriert": self.ignored,
            "uebersprungen": [{"stelle": p.where, "grund": p.reason} for p in self.problems],
            "uebersprungen_gesamt": self.problem_count,
        }


async def check_room(
    pool: AsyncConnectionPool, pair: Pair, source: str, source_ids: Sequence[str], limit: int
) -> None:
    """`QuotaFull` if the user's archive plus the turns of `source_ids` it lacks would hold
    more than `limit` turns."""
    async with pool.connection() as conn:
        held = await archive.user_turn_count(conn, pair.user_id)
        present = len(await archive.existing_source_ids(conn, pair, source, source_ids))
    new = len(source_ids) - present
    if new and held + new > limit:
        raise QuotaFull(
            f"your archive holds {held:,} turns; these {new:,} new ones would pass the limit "
            f"of {limit:,} turns per person ({setting_name('max_archive_turns')}); nothing was "
            "stored"
        )


def import_turn_id(source: str, source_id: str) -> str:
    return f"{IMPORT_TURN_PREFIX}{source}:{source_id}"


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _languages(turns: Sequence[ImportedTurn]) -> dict[str, str]:
    """Each turn's text-search configuration, decided per conversation
    (`text_search.text_configs`: a turn too short to tell takes its conversation's)."""
    by_conversation: dict[str, list[ImportedTurn]] = {}
    for turn in turns:
        by_conversation.setdefault(turn.conversation, []).append(turn)
    languages: dict[str, str] = {}
    for group in by_conversation.values():
        configs = text_configs([turn.text for turn in group])
        languages.update(
            (turn.source_id, config) for turn, config in zip(group, configs, strict=True)
        )
    return languages


def _batches(turns: Sequence[ImportedTurn], size: int) -> list[Sequence[ImportedTurn]]:
    return [turns[i : i + size] for i in range(0, len(turns), size)]


async def import_chat(
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    parsed: ParsedChat,
    *,
    pinned: bool = False,
    progress: Callable[[int], None] | None = None,
    batch: int = BATCH,
    max_turns: int | None = None,
) -> ImportReport:
    """Archive every turn of `parsed` the pair does not hold yet; `progress(n)` after each
    batch of n turns. A failed embedding raises after the batches before it were stored.
    `max_turns`: the user's archive quota (`QuotaFull` before anything is stored)."""
    report = ImportReport(
        parsed.format,
        len(parsed.turns),
        ignored=parsed.ignored,
        problems=list(parsed.problems),
        problem_count=parsed.problem_count,
        source_ids=[turn.source_id for turn in parsed.turns],
    )
    if max_turns is not None:
        await check_room(pool, pair, parsed.format, report.source_ids, max_turns)
    languages = _languages(parsed.turns)
    predecessor: dict[str, ImportedTurn] = {}  # conversation → its turn before this one
    last_vector: dict[str, np.ndarray] = {}  # source id → vector, for the next turn only
    for chunk in _batches(parsed.turns, batch):
        before: dict[str, ImportedTurn | None] = {}
        for turn in chunk:
            before[turn.source_id] = predecessor.get(turn.conversation)
            predecessor[turn.conversation] = turn
        async with pool.connection() as conn:
            stored = await archive.existing_source_ids(
                conn, pair, parsed.format, [t.source_id for t in chunk]
            )
        fresh = [turn for turn in chunk if turn.source_id not in stored]
        vectors: dict[str, np.ndarray] = {}
        if fresh:
            embedded = await model.embed([turn.text for turn in fresh])
            vectors = {
                turn.source_id: np.asarray(vector, dtype=np.float32)
                for turn, vector in zip(fresh, embedded, strict=True)
            }
            rows = await _rows(
                pool, pair, parsed.format, fresh, before, vectors, last_vector, pinned, languages
            )
            async with pool.connection() as conn:
                ids = await archive.insert_batch(conn, rows)
            report.new += sum(1 for i in ids if i is not None)
            report.existing += sum(1 for i in ids if i is None)
        report.existing += len(chunk) - len(fresh)
        last = chunk[-1].source_id
        last_vector = {last: vectors[last]} if last in vectors else {}
        if progress is not None:
            progress(len(chunk))
    if report.new:
        async with pool.connection() as conn:
            await archive.analyze_vocabulary(conn)
    return report


async def _rows(
    pool: AsyncConnectionPool,
    pair: Pair,
    source: str,
    fresh: list[ImportedTurn],
    before: dict[str, ImportedTurn | None],
    vectors: dict[str, np.ndarray],
    carried: dict[str, np.ndarray],
    pinned: bool,
    languages: dict[str, str],
) -> list[archive.ArchiveRow]:
    """Archive rows of the new turns with both views; predecessors not embedded in this
    batch come from the previous batch or the archive."""
    known = {**carried, **vectors}
    wanted = [
        previous.source_id
        for turn in fresh
        if (previous := before[turn.source_id]) is not None and previous.source_id not in known
    ]
    if wanted:
        async with pool.connection() as conn:
            known.update(await archive.vectors_of(conn, pair, source, wanted))
    rows = []
    for turn in fresh:
        vector = vectors[turn.source_id]
        previous = before[turn.source_id]
        context = None
        if previous is not None and previous.source_id in known:
            context = _unit(vector + known[previous.source_id])
        rows.append(
            archive.ArchiveRow(
                pair=pair,
                speaker=turn.speaker,
                text=turn.text,
                time=turn.time,
                origin=archive.ORIGIN_IMPORT,
                source=source,
                source_id=turn.source_id,
                language=languages[turn.source_id],
                turn_id=import_turn_id(source, turn.source_id),
                conversation=turn.conversation,
                embedding=vector,
                context_embedding=context,
                pinned=pinned,
                name=turn.name,
            )
        )
    return rows
