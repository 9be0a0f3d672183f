"""What a turn hands the impulse feature and takes from it (docs/behaviour/pixie.md#impulses):
the shadow tasks a CharacterGraph run sets (the dispatcher's delegation trigger), the open
knowledge questions offered to every answered turn, and closing one an answer took up.

The graph's door to the feature's stores (`shadow_queue.py`, `stack.py`), which it does not
import itself; `ShadowTask` and the task kinds are this door's vocabulary.

The open questions are the pair's active `wissensluecken` and `wissen_rueckweg` shadow
tasks (`auftrag-{id}`: a question Nova could not answer, knowledge that came back) and the
stack entries made from them (`stapel-{id}`), read with the turn context
(`knowledge_query`, `knowledge_questions`); one an answer took up is deleted or taken off
the stack — the conversation covered it, so no job and no impulse needs to bring it up
again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.impulses import shadow_queue
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.shadow_queue import (
    TASK_DELEGATION,
    TASK_KNOWLEDGE_BACK,
    TASK_KNOWLEDGE_GAP,
    TASK_RESEARCH,
    ShadowTask,
)
from novaberg.pair import Pair

__all__ = [
    "TASK_DELEGATION",
    "TASK_KNOWLEDGE_BACK",
    "TASK_KNOWLEDGE_GAP",
    "TASK_RESEARCH",
    "KnowledgeQuestion",
    "ShadowTask",
    "close_question",
    "knowledge_query",
    "knowledge_questions",
    "push_task",
    "task_question",
]

KNOWLEDGE_KINDS: Final = (TASK_KNOWLEDGE_GAP, TASK_KNOWLEDGE_BACK)
STACK_PREFIX: Final = "stapel-"
QUESTION_CHARS: Final = 300


async def push_task(pool: AsyncConnectionPool, task: ShadowTask, now: datetime) -> tuple[int, str]:
    """Push the task (insert, reinforce or reactivate): (row id, how)."""
    return await shadow_queue.push(pool, task, now)


def task_question(row: Mapping[str, Any]) -> str:
    """The question a task stands for: the words Nova could not answer, or the knowledge
    that came back, led by its topic."""
    context = " ".join(str(row.get("kontext") or "").split())[:QUESTION_CHARS]
    topic = str(row["thema"])
    return f"{topic}: {context}" if context and context != topic else topic


@dataclass(frozen=True, slots=True)
class KnowledgeQuestion:
    """An open knowledge question of the pair: its id (`auftrag-{id}` or `stapel-{id}`, what
    `close_question` closes), the question text and its kind (`wissensluecken` or
    `wissen_rueckweg`)."""

    id: str
    question: str
    source: str


def knowledge_query(pair: Pair, limit: int) -> tuple[str, list[Any]]:
    """The pair's active knowledge tasks, best first, as a statement for a batched read."""
    return shadow_queue.best_query(
        list(KNOWLEDGE_KINDS), user_id=pair.user_id, character_id=pair.character_id, limit=limit
    )


def knowledge_questions(
    task_rows: Sequence[Mapping[str, Any]], stack_values: Iterable[str | bytes], limit: int
) -> tuple[KnowledgeQuestion, ...]:
    """The open questions of `knowledge_query`'s rows (best first), then the knowledge
    entries of the stack hash's values (oldest first); at most `limit`."""
    found = [
        KnowledgeQuestion(
            f"{shadow_queue.TASK_ID_PREFIX}{row['id']}", task_question(row), str(row["aufgabe"])
        )
        for row in task_rows
    ]
    for entry in impulse_stack.parse_entries(stack_values):
        if entry.aufgabe in KNOWLEDGE_KINDS:
            question = f"{entry.thema}: {entry.inhalt[:QUESTION_CHARS]}"
            found.append(KnowledgeQuestion(f"{STACK_PREFIX}{entry.id}", question, entry.aufgabe))
    return tuple(found[:limit])


async def close_question(
    redis: aioredis.Redis, pool: AsyncConnectionPool, pair: Pair, question_id: str
) -> bool:
    """Close what an offered question stands for (its task or its stack entry); whether
    something was closed."""
    task_id = shadow_queue.task_id_of(question_id)
    if task_id is not None:
        return await shadow_queue.dismiss(pool, pair.user_id, pair.character_id, task_id)
    if question_id.startswith(STACK_PREFIX):
        removed = await impulse_stack.remove(redis, pair, [question_id[len(STACK_PREFIX) :]])
        return removed == 1
    return False
