"""Open questions Nova noticed, offered to every answered turn and closed when taken up
(docs/behaviour/nodes.md#uptake, docs/behaviour/pixie.md#knowledge-gaps).

The CharacterGraph registers `open_questions` as an uptake offer source and
`close_taken_up` as an uptake hook; what the questions are and how one is closed is the
impulse feature's (`impulses/turn_tasks.py`).
"""

from __future__ import annotations

import logging
from typing import Any, Final

from psycopg import AsyncConnection

from novaberg.agents.deps import GraphDeps
from novaberg.graph.nodes.uptake import OpenQuestion
from novaberg.impulses import turn_tasks
from novaberg.pair import Pair

log = logging.getLogger(__name__)

MAX_OFFERS: Final = 8
"""Questions offered per turn (they are embedded together with the answer)."""


async def open_questions(
    deps: GraphDeps, pair: Pair, conn: AsyncConnection[Any]
) -> list[dict[str, Any]]:
    """The pair's open knowledge questions as uptake offers `{id, frage, quelle}`; the
    tasks are read on `conn`, the uptake node's connection for its row."""
    return await turn_tasks.knowledge_offers(deps.redis, conn, pair, MAX_OFFERS)


async def close_taken_up(deps: GraphDeps, pair: Pair, question: OpenQuestion, turn_id: str) -> None:
    """Uptake hook: the answer of `turn_id` took the question up; close what it stands for."""
    qid = question.id or ""
    closed = await turn_tasks.close_question(deps.redis, deps.pool, pair, qid)
    log.info(
        "uptake %s: %s (%s) taken up in %s; closed=%s", pair, qid, question.source, turn_id, closed
    )
