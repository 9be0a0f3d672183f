"""Open questions Nova noticed, offered to the composer and closed when an answer takes one
up (docs/behaviour/nodes.md#composer, docs/behaviour/nodes.md#uptake,
docs/behaviour/pixie.md#knowledge-gaps).

The turn context holds the pair's open knowledge questions (a question Nova could not
answer, knowledge that came back). The composer offers the first few of them as the
`[OFFENE-FRAGEN]` block and writes exactly those into `uptake_offers`, so the uptake node
measures the answer against what was offered — never against questions the composer did not
see. The CharacterGraph registers `close_taken_up` as an uptake hook; what a question is
and how one is closed is the impulse feature's (`impulses/turn_tasks.py`).
"""

from __future__ import annotations

import logging
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.graph.nodes.uptake import OpenQuestion
from novaberg.graph.state import ConversationState
from novaberg.impulses import turn_tasks
from novaberg.pair import Pair

log = logging.getLogger(__name__)

MAX_OFFERS: Final = 3
"""Questions offered per turn: a few, so a turn with open questions stays short."""

OFFER_CHARS: Final = 120
"""An offered question is cut to this length (the bundled model has a 2048-token context)."""


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= OFFER_CHARS else flat[: OFFER_CHARS - 1] + "…"


def offers_for(state: ConversationState) -> list[dict[str, Any]]:
    """The open questions this turn offers the composer, as uptake offers `{id, frage,
    quelle}` (best first, at most `MAX_OFFERS`, each cut to `OFFER_CHARS`); [] when none is
    open or the run has no turn context (pure)."""
    context = state.get("turn_context")
    questions = context.knowledge_questions if context is not None else ()
    return [
        {"id": q.id, "frage": _clip(q.question), "quelle": q.source}
        for q in questions[:MAX_OFFERS]
        if q.question.strip()
    ]


def offer_lines(offers: list[dict[str, Any]]) -> str:
    """The `[OFFENE-FRAGEN]` lines, one question a line; "" without offers (no block)."""
    return "\n".join(f"- {offer['frage']}" for offer in offers)


async def close_taken_up(deps: GraphDeps, pair: Pair, question: OpenQuestion, turn_id: str) -> None:
    """Uptake hook: the answer of `turn_id` took the question up; close what it stands for."""
    qid = question.id or ""
    closed = await turn_tasks.close_question(deps.redis, deps.pool, pair, qid)
    log.info(
        "uptake %s: %s (%s) taken up in %s; closed=%s", pair, qid, question.source, turn_id, closed
    )
