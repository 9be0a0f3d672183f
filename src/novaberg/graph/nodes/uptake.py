"""Uptake (Aufgriff): did the released answer take up one of the open questions the turn
offered? (docs/behaviour/nodes.md#uptake)

A measuring instrument without effect on the answer. It runs after the release, so its
embedding call is not part of the wait, and reads the answer after the last correction.

- **Offers** are the `uptake_offers` channel and nothing else: the open questions
  (`{"id", "frage", "quelle"}`) the composer put into its prompt as `[OFFENE-FRAGEN]`
  (graph/knowledge_gaps.py). A question the composer did not see cannot be taken up, so
  an answer that happens to resemble one is not counted.
- **Judgement:** the answer and every offered question are embedded in one call; the best
  cosine at or above `UPTAKE_COSINE` is taken up. No offers → no call.
- **One row per answered turn** in `offene_fragen_aufgriff` (offered count, taken up or
  not, which question, its cosine, or the failure).
- **Hook:** callables registered with `register_uptake_hook` are awaited with each
  question taken up (`(deps, pair, question, turn_id)`), so the owner of the questions can
  close them; a failing hook is logged and does not touch the row.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from psycopg import AsyncConnection

from novaberg.agents.deps import GraphDeps
from novaberg.graph.state import ConversationState
from novaberg.llm.errors import ModelError
from novaberg.memory.run_log import UptakeRow, record_uptake
from novaberg.pair import Pair

log = logging.getLogger(__name__)

UPTAKE_COSINE: Final = 0.6
"""An answer this close (cosine) to an offered question takes it up."""


@dataclass(frozen=True, slots=True)
class OpenQuestion:
    """An offered question: its id (closes it when taken up), its text, where it came from."""

    id: str | None
    question: str
    source: str = ""


@dataclass(frozen=True, slots=True)
class Uptake:
    offered: int
    taken: OpenQuestion | None
    cosine: float | None
    failure: str | None = None

    @property
    def taken_up(self) -> bool | None:
        """True/False once judged; None when nothing was offered or judging failed."""
        if self.failure is not None or self.offered == 0:
            return None
        return self.taken is not None


UptakeHook = Callable[[GraphDeps, Pair, OpenQuestion, str], Awaitable[None]]
_HOOKS: list[UptakeHook] = []


def register_uptake_hook(hook: UptakeHook) -> None:
    """Be told of every open question an answer takes up (e.g. to close a knowledge gap)."""
    if hook not in _HOOKS:
        _HOOKS.append(hook)


def unregister_uptake_hook(hook: UptakeHook) -> None:
    if hook in _HOOKS:
        _HOOKS.remove(hook)


def offered_questions(state: ConversationState) -> list[OpenQuestion]:
    """The turn's offers, unusable items (no question text) dropped."""
    return questions_from(state.get("uptake_offers") or [])


def questions_from(items: list[Any]) -> list[OpenQuestion]:
    """Offer items (`{id, frage, quelle}` or a bare string) as questions; unusable ones dropped."""
    found: list[OpenQuestion] = []
    for item in items:
        if isinstance(item, str):
            item = {"frage": item}
        text = " ".join(str(item.get("frage") or "").split()) if isinstance(item, dict) else ""
        if text:
            raw_id = item.get("id")
            found.append(
                OpenQuestion(
                    None if raw_id is None else str(raw_id), text, str(item.get("quelle") or "")
                )
            )
    return found


def judge(answer: list[float], questions: list[list[float]], offers: list[OpenQuestion]) -> Uptake:
    """The best offered question by cosine, taken up at ≥ `UPTAKE_COSINE` (pure)."""
    a = np.asarray(answer, dtype=np.float64)
    best_index, best = -1, -2.0
    for index, vector in enumerate(questions):
        q = np.asarray(vector, dtype=np.float64)
        norm = float(np.linalg.norm(a) * np.linalg.norm(q))
        cosine = float(a @ q / norm) if norm else 0.0
        if cosine > best:
            best_index, best = index, cosine
    if best_index < 0:
        return Uptake(len(offers), None, None)
    taken = offers[best_index] if best >= UPTAKE_COSINE else None
    return Uptake(len(offers), taken, round(best, 4))


async def judge_uptake(
    state: ConversationState, deps: GraphDeps, offered: list[OpenQuestion] | None = None
) -> Uptake:
    offers = offered_questions(state) if offered is None else offered
    answer = (state.get("response") or "").strip()
    if not offers or not answer:
        return Uptake(len(offers), None, None)
    try:
        vectors = await deps.model.embed([answer, *(q.question for q in offers)])
    except ModelError as exc:
        return Uptake(len(offers), None, None, f"embedding_gescheitert: {type(exc).__name__}")
    return judge(vectors[0], vectors[1:], offers)


async def _write_row(conn: AsyncConnection[Any], state: ConversationState, result: Uptake) -> None:
    """The turn's `offene_fragen_aufgriff` row."""
    taken = result.taken
    await record_uptake(
        conn,
        UptakeRow(
            turn_id=state.get("turn_id") or "",
            user_id=state["user_id"],
            character_id=state["character_id"],
            offered=result.offered,
            taken_up=result.taken_up,
            question_id=taken.id if taken else None,
            question=taken.question if taken else None,
            cosine=result.cosine,
            failure=result.failure,
        ),
    )


async def uptake(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Judge the uptake of what was offered, write the turn's row, tell the hooks."""
    if not (state.get("response") or "").strip():
        return {"_log": {"uebersprungen": "keine_antwort"}}
    offers = offered_questions(state)
    # no connection is held while the offers are embedded
    result = await judge_uptake(state, deps, offers)
    async with deps.pool.connection() as conn:
        await _write_row(conn, state, result)
    taken = result.taken
    if taken is not None:
        pair = Pair(state["user_id"], state["character_id"])
        for hook in list(_HOOKS):
            try:
                await hook(deps, pair, taken, state.get("turn_id") or "")
            except Exception:  # the measurement stands; the owner's failure is its own
                log.exception("uptake: hook %r failed for question %r", hook, taken.id)
    return {
        "_log": {
            "angeboten": result.offered,
            "angebot_ids": [q.id for q in offers],
            "aufgegriffen": result.taken_up,
            "frage_id": taken.id if taken else None,
            "cosinus": result.cosine,
            "ausfall": result.failure,
        }
    }
