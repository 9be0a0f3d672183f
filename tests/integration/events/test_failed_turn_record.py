"""A sent failure naming the person's ids is kept for the history once; a duplicate (the
run had its outcome already) and a failure without ids keep nothing."""

from __future__ import annotations

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.events.outcomes import MODEL_TIMEOUT, Outcomes
from novaberg.store.failed_turns import FailedTurnLog
from novaberg.store.pipeline_log import KIND_FAILED_TURN


async def _rows(db: AsyncConnectionPool) -> list[dict]:  # type: ignore[type-arg]
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT turn_id, user_id, character_id, inhalt FROM pipeline_log WHERE art = %s"
            " ORDER BY id",
            (KIND_FAILED_TURN,),
        )
        return [dict(r) for r in await cur.fetchall()]


async def test_a_sent_failure_is_kept_once(redis: aioredis.Redis, db: AsyncConnectionPool) -> None:
    outcomes = Outcomes(redis, failures=FailedTurnLog(db))
    sent = await outcomes.fail("ida", "nova", "t-1", 0, ["m1", "m2"], MODEL_TIMEOUT, ["a", "b"])
    again = await outcomes.fail("ida", "nova", "t-1", 0, ["m1", "m2"], MODEL_TIMEOUT, ["a", "b"])
    alone = await outcomes.fail("ida", "nova", "t-2", 1, [], MODEL_TIMEOUT)
    assert sent > 0 and again == 0 and alone > 0
    (row,) = await _rows(db)
    assert (row["turn_id"], row["user_id"], row["character_id"]) == ("t-1", "ida", "nova")
    assert row["inhalt"] == {
        "grund": MODEL_TIMEOUT,
        "nachrichten_ids": ["m1", "m2"],
        "eingaben": ["a", "b"],
        "user_prompt": "a\nb",
    }


async def test_without_a_recorder_nothing_is_kept(
    redis: aioredis.Redis, db: AsyncConnectionPool
) -> None:
    assert await Outcomes(redis).fail("ida", "nova", "t-3", 0, ["m3"], MODEL_TIMEOUT, ["x"]) > 0
    assert await _rows(db) == []
