"""Open questions Nova noticed, offered to every answered turn and closed when taken up
(docs/behaviour/nodes.md#uptake, docs/behaviour/pixie.md#knowledge-gaps).

The offers are the pair's active `wissensluecken` and `wissen_rueckweg` shadow tasks
(`auftrag-{id}`: a question she could not answer, knowledge that came back) and the stack
entries made from them (`stapel-{id}`). When the uptake node finds that an answer took
one up, `close_taken_up` (an uptake hook) deletes the task or takes the entry off the
stack: the conversation covered it, so no job and no impulse needs to bring it up again.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from psycopg import AsyncConnection

from novaberg.agents.deps import GraphDeps
from novaberg.graph.nodes.uptake import OpenQuestion
from novaberg.impulses import shadow_queue
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.shadow_queue import TASK_KNOWLEDGE_BACK, TASK_KNOWLEDGE_GAP
from novaberg.pair import Pair

log = logging.getLogger(__name__)

KINDS: Final = (TASK_KNOWLEDGE_GAP, TASK_KNOWLEDGE_BACK)
STACK_PREFIX: Final = "stapel-"
MAX_OFFERS: Final = 8
"""Questions offered per turn (they are embedded together with the answer)."""

QUESTION_CHARS: Final = 300


def task_question(row: dict[str, Any]) -> str:
    """The question a task stands for: the words Nova could not answer, or the knowledge
    that came back, led by its topic."""
    context = " ".join(str(row.get("kontext") or "").split())[:QUESTION_CHARS]
    topic = str(row["thema"])
    return f"{topic}: {context}" if context and context != topic else topic


async def open_questions(
    deps: GraphDeps, pair: Pair, conn: AsyncConnection[Any]
) -> list[dict[str, Any]]:
    """The pair's open knowledge questions as uptake offers `{id, frage, quelle}`; the
    tasks are read on `conn`, the uptake node's connection for its row."""
    rows = await shadow_queue.best_on(
        conn,
        list(KINDS),
        user_id=pair.user_id,
        character_id=pair.character_id,
        limit=MAX_OFFERS,
    )
    offers = [
        {
            "id": f"{shadow_queue.TASK_ID_PREFIX}{r['id']}",
            "frage": task_question(r),
            "quelle": r["aufgabe"],
        }
        for r in rows
    ]
    for entry in await impulse_stack.entries(deps.redis, pair):
        if entry.aufgabe in KINDS and len(offers) < MAX_OFFERS:
            offers.append(
                {
                    "id": f"{STACK_PREFIX}{entry.id}",
                    "frage": f"{entry.thema}: {entry.inhalt[:QUESTION_CHARS]}",
                    "quelle": entry.aufgabe,
                }
            )
    return offers[:MAX_OFFERS]


async def close_taken_up(deps: GraphDeps, pair: Pair, question: OpenQuestion, turn_id: str) -> None:
    """Uptake hook: the answer of `turn_id` took the question up; close what it stands for."""
    qid = question.id or ""
    closed = False
    task_id = shadow_queue.task_id_of(qid)
    if task_id is not None:
        closed = await shadow_queue.dismiss(deps.pool, pair.user_id, pair.character_id, task_id)
    elif qid.startswith(STACK_PREFIX):
        closed = await impulse_stack.remove(deps.redis, pair, [qid[len(STACK_PREFIX) :]]) == 1
    log.info(
        "uptake %s: %s (%s) taken up in %s; closed=%s", pair, qid, question.quelle, turn_id, closed
    )
