"""Statements queued in one pipeline (store/pipelined.py), against the real PostgreSQL."""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from novaberg.store.pipelined import Reply, local_settings

SETTING = "SELECT current_setting('plan_cache_mode') AS v"


async def test_settings_stay_local_to_their_block_within_one_round_trip(
    db: AsyncConnectionPool,
) -> None:
    async with db.connection() as conn:
        async with conn.pipeline():
            before = await conn.execute(SETTING)
            async with local_settings(conn):
                await conn.execute(
                    "SELECT set_config('plan_cache_mode', 'force_custom_plan', true)"
                )
                inside = Reply.of(await conn.execute(SETTING), lambda rows: rows[0]["v"])
            after = await conn.execute(SETTING)
        assert (await before.fetchone())["v"] == "auto"
        assert await inside.then(str.upper).read() == "FORCE_CUSTOM_PLAN"
        assert (await after.fetchone())["v"] == "auto"
        assert conn.info.transaction_status == 0  # idle: the block was committed


async def test_a_ready_reply_needs_no_statement() -> None:
    assert await Reply.ready([1]).then(len).read() == 1
