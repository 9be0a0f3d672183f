"""Statements queued in one pipeline (store/pipelined.py), against the real PostgreSQL."""

from __future__ import annotations

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from novaberg.store.pipelined import Reply, local_settings, pipeline

SETTING = "SELECT current_setting('plan_cache_mode') AS v"
COUNTED = "SELECT %s::int + 0 AS v"


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


async def test_a_failed_pipeline_leaves_no_statement_half_prepared(
    db: AsyncConnectionPool,
) -> None:
    """psycopg prepares a statement at its threshold's run; in a pipeline whose earlier
    statement fails, the server never prepares it. The connection must still run it."""
    async with db.connection() as conn:
        threshold = conn.prepare_threshold
        assert threshold is not None
        for n in range(threshold):  # the next run of COUNTED would prepare it
            await conn.execute(COUNTED, (n,))
        with pytest.raises(psycopg.errors.UndefinedTable):
            async with pipeline(conn):
                await conn.execute("INSERT INTO keine_solche_tabelle VALUES (1)")
                await conn.execute(COUNTED, (1,))
        assert conn.prepare_threshold == threshold
        for n in (7, 8):  # prepared now, outside the pipeline, and used
            cur = await conn.execute(COUNTED, (n,))
            assert (await cur.fetchone())["v"] == n
