"""`--distil`: imported turns through salience and short-term condensing, as if just said.

For each archived row of an import not yet distilled (`destilliert_am` NULL), oldest first:
the salience node scores it (a user turn as the HumanGraph does, an answer as the
CharacterGraph does, with the user turn before it as background), and every segment above
the gate becomes a short-term entry (condense, embed, reinforce, queue the promotion, mark
the profiles dirty — memory/short_term/creation.py). Its `turn_id` is the row's, so the entry's
provenance leads back to the imported turn. The row is then marked: a second run continues
with the rest (a crash between an entry and its mark may condense that one turn twice).
The model calls take the model gate at background priority — a live user turn goes first.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Final

from novaberg.graph.contract import GraphDeps
from novaberg.graph.nodes.salience import salience
from novaberg.graph.personality import InternalPersonality, Personality
from novaberg.graph.state import ConversationState
from novaberg.llm.gate import ModelGate, Priority
from novaberg.memory.bridge import observer_for, store_short_term_writes
from novaberg.pair import Pair
from novaberg.store import archive
from novaberg.store.archive import ArchivedTurn
from novaberg.wire import EI_ROLE_CHARACTER, EI_ROLE_USER, GRAPH_CHARACTER, GRAPH_HUMAN

NO_PREVIOUS_TURN: Final = "(kein vorheriger Beitrag)"
"""Background of an answer that opens the conversation (the salience prompt needs one)."""


@dataclass
class DistilReport:
    turns: int = 0
    entries: int = 0
    refused: int = 0

    def as_json(self) -> dict[str, int]:
        return {"turns": self.turns, "kzg_eintraege": self.entries, "abgelehnt": self.refused}


@contextlib.asynccontextmanager
async def _slot(gate: ModelGate | None) -> AsyncIterator[None]:
    if gate is None:
        yield
        return
    async with gate.slot(Priority.BACKGROUND):
        yield


def _state(
    row: ArchivedTurn, previous_user: ArchivedTurn | None, human_salience: float | None
) -> ConversationState:
    user = row.speaker == archive.SPEAKER_USER
    state = ConversationState(
        user_id=row.user_id,
        character_id=row.character_id,
        turn_id=row.turn_id or "",  # an imported row always has its import's turn id
        graph_role=GRAPH_HUMAN if user else GRAPH_CHARACTER,
        ei_calc_role=EI_ROLE_USER if user else EI_ROLE_CHARACTER,
        own_thought="",
        gravitation_term=0.0,
        external=Personality(),
        internal=InternalPersonality(),
        event_payload={},
    )
    if user:
        state["user_prompt"], state["response"] = row.text, ""
    else:
        background = previous_user.text if previous_user else NO_PREVIOUS_TURN
        state["user_prompt"], state["response"] = background, row.text
        state["human_salience"] = human_salience
    return state


def _at(moment: datetime) -> Callable[[], float]:
    """A clock standing at `moment`."""
    stamp = moment.timestamp()
    return lambda: stamp


async def distil_import(
    deps: GraphDeps,
    pair: Pair,
    source: str,
    source_ids: Sequence[str],
    *,
    gate: ModelGate | None = None,
    progress: Callable[[int], None] | None = None,
) -> DistilReport:
    """Distil the not yet distilled rows of these source ids; `progress(1)` per row."""
    async with deps.pool.connection() as conn:
        rows = await archive.undistilled(conn, pair, source, source_ids)
    report = DistilReport()
    previous_user: ArchivedTurn | None = None
    human_salience: float | None = None
    for row in rows:
        state = _state(row, previous_user, human_salience)
        async with _slot(gate):
            # a day the row names ("am Dienstag") is counted from when the row was said
            update = await salience(state, replace(deps, clock=_at(row.time)))
            outcome = await store_short_term_writes(
                deps.redis,
                deps.pool,
                deps.model,
                pair,
                update.get("pending_writes") or [],
                observer=observer_for(state["ei_calc_role"]),
                turn_id=row.turn_id,
                perception=None,
                clock=deps.clock,
                pipeline_log=deps.log,
                promotions=deps.settings.pixie,
                tz=deps.settings.tz,
            )
        if row.speaker == archive.SPEAKER_USER:
            previous_user, human_salience = row, update.get("human_salience")
        report.turns += 1
        report.entries += len(outcome.stored)
        report.refused += outcome.results.count("abgelehnt")
        async with deps.pool.connection() as conn:
            await archive.mark_distilled(conn, row.id, datetime.fromtimestamp(deps.clock(), UTC))
        if progress is not None:
            progress(1)
    return report
