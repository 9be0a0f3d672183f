"""Handing a case to Pixie (docs/behaviour/agents.md#delegation).

The delegation and the research agent both give a matter they cannot finish in the turn to
the shadow queue; the task names its case (`fall {id}`) and the turn that opened it, so the
impulse that comes of it can say what it answers.
"""

from __future__ import annotations

from datetime import datetime

from psycopg_pool import AsyncConnectionPool

from novaberg.agents.delegation.repository import Case
from novaberg.impulses.turn_tasks import ShadowTask, push_task
from novaberg.pair import Pair


async def hand_on(
    pool: AsyncConnectionPool,
    pair: Pair,
    case: Case,
    *,
    task: str,
    context: str,
    cause: str,
    salience: float,
    now: datetime,
) -> int:
    """Push the case as a `task` shadow task; the task's row id."""
    task_id, _how = await push_task(
        pool,
        ShadowTask(
            user_id=pair.user_id,
            character_id=pair.character_id,
            task=task,
            topic=case.topic,
            context=context,
            reason=f"fall {case.id}: {cause}",
            reference_id=case.turn_id,
            salience=salience,
        ),
        now,
    )
    return task_id
