"""The batching pipeline_log writer."""

from __future__ import annotations

import asyncio
import logging

import pytest

from novaberg.store.pipeline_log import LogRow, PipelineLog, read_turn


async def test_rows_are_written_on_flush_in_order(db) -> None:  # type: ignore[no-untyped-def]
    log = PipelineLog(db, flush_interval=60)
    for i in range(5):
        log.add(source="human", node=f"n{i}", kind="node", turn_id="t1", duration_ms=float(i))
    log.add(source="human", node="other", kind="node", turn_id="t2")
    assert log.pending == 6
    assert await log.flush() == 6
    rows = await read_turn(db, "t1")
    assert [r["node"] for r in rows] == ["n0", "n1", "n2", "n3", "n4"]
    await log.close()


async def test_background_flusher_writes_without_explicit_flush(db) -> None:  # type: ignore[no-untyped-def]
    log = PipelineLog(db, flush_interval=0.05)
    log.record(LogRow(source="character", node="bg", kind="node", turn_id="t-bg"))
    for _ in range(100):
        await asyncio.sleep(0.05)
        if await read_turn(db, "t-bg"):
            break
    assert [r["node"] for r in await read_turn(db, "t-bg")] == ["bg"]
    await log.close()


async def test_failed_flush_is_retried_once_and_loud(
    db,
    caplog: pytest.LogCaptureFixture,  # type: ignore[no-untyped-def]
) -> None:
    log = PipelineLog(db, flush_interval=60)
    attempts = 0
    real_write = log._write

    async def flaky(batch):  # type: ignore[no-untyped-def]
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise ConnectionError("weg")
        await real_write(batch)

    log._write = flaky  # type: ignore[method-assign]
    log.add(source="human", node="retry", kind="node", turn_id="t-retry")
    with caplog.at_level(logging.ERROR, logger="novaberg.store.pipeline_log"):
        assert await log.flush() == 1
    assert attempts == 2
    assert "retrying once" in caplog.text
    assert [r["node"] for r in await read_turn(db, "t-retry")] == ["retry"]


async def test_double_failure_drops_loudly(db, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    log = PipelineLog(db, flush_interval=60)

    async def broken(batch):  # type: ignore[no-untyped-def]
        raise ConnectionError("weg")

    log._write = broken  # type: ignore[method-assign]
    log.add(source="human", node="lost", kind="node", turn_id="t-lost")
    with caplog.at_level(logging.ERROR, logger="novaberg.store.pipeline_log"):
        assert await log.flush() == 0
    assert log.dropped == 1
    assert "DROPPED 1 rows" in caplog.text and "t-lost" in caplog.text


def test_rows_recorded_without_a_loop_wait_for_a_flush() -> None:
    log = PipelineLog(None, flush_interval=60)  # type: ignore[arg-type]  # never flushed
    log.add(source="human", node="n", kind="node")
    assert log.pending == 1 and log._task is None
