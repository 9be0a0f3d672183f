"""`pipeline_log`: one row per node run (and other notable events), written in batches.

Recording must cost a node microseconds, so `PipelineLog.record` only appends to an
in-memory buffer; a background task flushes it every `FLUSH_INTERVAL_S`
(docs/behaviour/graphs.md#pipeline-log). Rows are never lost silently: a
failed flush is logged at ERROR and retried once; if the retry fails too, the dropped rows
are named (count and turn ids) in a second ERROR line.

Call `await log.flush()` before reading a turn back (tests, the CLI) and `await log.close()`
on shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import orjson
from psycopg import AsyncConnection
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S: Final = 1.0
"""Background flush period: 1 s keeps the developer's view of a turn current without
costing the turn anything."""

RETRY_DELAY_S: Final = 0.2
"""Pause before the single retry of a failed flush."""

KIND_NODE: Final = "node"
"""`art` of the row the node wrapper writes for each node run."""

KIND_RAW_TURN: Final = "turn_roh"
"""`art` of an answered turn's raw record (the dispatcher); kept when older rows are purged."""

KIND_FAILED_TURN: Final = "turn_gescheitert"
"""`art` of a user's turn that ended without an answer (store/failed_turns.py); kept too."""

HISTORY_KINDS: Final = (KIND_RAW_TURN, KIND_FAILED_TURN)
"""The rows of the conversation history, never purged."""

RESULT_OK: Final = "ok"
RESULT_FAILED: Final = "fehler"
"""`ergebnis` of a node row: the node returned, or it raised."""

CONTENT_STRUCTURED: Final = "strukturiert"
"""`inhalt` key of a node row: how its structured calls ended, `{schema: {outcome: count}}`
— the per-call parse rate of a model server, read from the log."""

STRUCTURED_FIRST: Final = "erster_versuch"
STRUCTURED_AFTER_HINT: Final = "nach_hinweis"
STRUCTURED_UNREADABLE: Final = "unlesbar"
"""The outcomes under `strukturiert`: valid at the first answer, valid after the retry with
the hint, unreadable after that retry."""

_COPY: Final = (
    "COPY pipeline_log (erstellt_am, turn_id, span_id, quelle, node, art, dauer_ms,"
    " modell_aufrufe, ergebnis, inhalt, user_id, character_id) FROM STDIN"
)
"""COPY instead of INSERT: a batch of rows costs one statement and a fraction of the CPU."""


@dataclass(slots=True)
class LogRow:
    """One pipeline_log row as recorded; `params` maps it to the columns of `_COPY`
    (source → quelle, kind → art, duration_ms → dauer_ms, model_calls → modell_aufrufe,
    outcome → ergebnis, content → inhalt, created_at → erstellt_am)."""

    source: str
    node: str
    kind: str
    turn_id: str | None = None
    duration_ms: float | None = None
    model_calls: int = 0
    outcome: str = "ok"
    content: dict[str, Any] = field(default_factory=dict)
    user_id: str | None = None
    character_id: str | None = None
    span_id: uuid.UUID | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def params(self) -> tuple[Any, ...]:
        return (
            self.created_at,
            self.turn_id,
            self.span_id,
            self.source,
            self.node,
            self.kind,
            self.duration_ms,
            self.model_calls,
            self.outcome,
            Jsonb(self.content, dumps=_dumps),
            self.user_id,
            self.character_id,
        )


_JSON_OPTIONS: Final = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _dumps(value: Any) -> bytes:
    """A row's `inhalt` as JSON. orjson: the flush serialises hundreds of rows at once;
    anything it cannot represent is written as its `str()`."""
    return orjson.dumps(value, default=str, option=_JSON_OPTIONS)


class PipelineLog:
    """Buffered, asynchronously flushed writer of pipeline_log rows."""

    def __init__(
        self, pool: AsyncConnectionPool, *, flush_interval: float = FLUSH_INTERVAL_S
    ) -> None:
        self.pool = pool
        self.flush_interval = flush_interval
        self._buffer: list[LogRow] = []
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self.written = 0
        self.dropped = 0

    # --- recording (sync, microseconds) ---------------------------------------------

    def record(self, row: LogRow) -> None:
        """Queue one row; starts the background flusher on the running loop if needed."""
        self._buffer.append(row)
        self._ensure_flusher()

    def add(
        self,
        *,
        source: str,
        node: str,
        kind: str,
        turn_id: str | None = None,
        duration_ms: float | None = None,
        model_calls: int = 0,
        outcome: str = "ok",
        content: dict[str, Any] | None = None,
        user_id: str | None = None,
        character_id: str | None = None,
    ) -> None:
        """Keyword form of `record` for rows that are not node runs (e.g. a dispatcher note)."""
        self.record(
            LogRow(
                source=source,
                node=node,
                kind=kind,
                turn_id=turn_id,
                duration_ms=duration_ms,
                model_calls=model_calls,
                outcome=outcome,
                content=content or {},
                user_id=user_id,
                character_id=character_id,
            )
        )

    @property
    def pending(self) -> int:
        """Rows recorded but not yet written."""
        return len(self._buffer)

    # --- flushing ----------------------------------------------------------------------

    def _ensure_flusher(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: rows wait for an explicit flush()
        task = self._task
        if task is not None and not task.done() and task.get_loop() is loop:
            return
        self._task = loop.create_task(self._run(), name="pipeline_log_flusher")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.flush_interval)
            try:
                await self.flush()
            except Exception:  # flush() logs its own failures; never kill the flusher
                log.exception("pipeline_log: unexpected flusher error")

    def _get_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock = asyncio.Lock()
            self._lock_loop = loop
        return self._lock

    async def flush(self) -> int:
        """Write every buffered row now; returns how many rows were written."""
        async with self._get_lock():
            if not self._buffer:
                return 0
            batch, self._buffer = self._buffer, []
            try:
                await self._write(batch)
            except Exception as first:
                log.error(
                    "pipeline_log: flush of %d rows failed (%s); retrying once", len(batch), first
                )
                await asyncio.sleep(RETRY_DELAY_S)
                try:
                    await self._write(batch)
                except Exception as second:
                    turns = sorted({row.turn_id or "-" for row in batch})
                    self.dropped += len(batch)
                    log.error(
                        "pipeline_log: retry failed (%s); DROPPED %d rows of turns %s",
                        second,
                        len(batch),
                        ", ".join(turns[:20]),
                    )
                    return 0
            self.written += len(batch)
            return len(batch)

    async def _write(self, batch: list[LogRow]) -> None:
        async with (
            self.pool.connection() as conn,
            conn.cursor() as cur,
            cur.copy(_COPY) as copy,
        ):
            for row in batch:
                await copy.write_row(row.params())

    async def close(self) -> None:
        """Stop the background flusher and write what is left."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            if task.get_loop() is asyncio.get_running_loop():
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.flush()


async def read_turn(pool: AsyncConnectionPool, turn_id: str) -> list[dict[str, Any]]:
    """Every pipeline_log row of one turn, oldest first (flush the writer before reading)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT id, erstellt_am, turn_id, span_id, quelle, node, art, dauer_ms,"
            " modell_aufrufe, ergebnis, inhalt, user_id, character_id"
            " FROM pipeline_log WHERE turn_id = %s ORDER BY erstellt_am, id",
            (turn_id,),
        )
        return [dict(row) for row in await cur.fetchall()]


async def purge_pipeline_log(conn: AsyncConnection[Any], before: datetime) -> int:
    """Delete pipeline_log rows older than `before`, except the conversation history
    (answered and failed turns, kept forever)."""
    cur = await conn.execute(
        "DELETE FROM pipeline_log WHERE erstellt_am < %s AND art <> ALL(%s)",
        (before, list(HISTORY_KINDS)),
    )
    return cur.rowcount
