"""The record a graph run leaves in PostgreSQL (docs/behaviour/graphs.md#pipeline-log):
one `pipeline_log` row per node run, the raw record of an answered turn (`turn_roh`, kept
when older rows are purged), every PendingWrite with what became of it
(`pending_writes_log`, with the `verbindung` rows of the short-term entries it stored) and
the uptake measurement (`offene_fragen_aufgriff`).

Nodes hand over what happened; the row formats and the SQL live in the stores.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final

import psycopg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.memory.bridge import PendingWrite
from novaberg.store import pending_writes, uptake_log
from novaberg.store.pending_writes import LoggedWrite
from novaberg.store.pipeline_log import (
    CONTENT_STRUCTURED,
    KIND_NODE,
    KIND_RAW_TURN,
    RESULT_FAILED,
    RESULT_OK,
    LogRow,
    PipelineLog,
)
from novaberg.store.uptake_log import UptakeRow

__all__ = [
    "WRITE_OPEN",
    "UptakeRow",
    "record_node_run",
    "record_pending_writes",
    "record_raw_turn",
    "record_uptake",
]

log = logging.getLogger(__name__)

WRITE_OPEN: Final = "offen"
"""pending_writes_log.ergebnis of a write nobody carried out yet."""


def record_node_run(
    pipeline_log: PipelineLog,
    *,
    graph: str,
    node: str,
    turn_id: str | None,
    user_id: str | None,
    character_id: str | None,
    elapsed_ms: float,
    calls: int,
    ok: bool,
    summary: dict[str, Any],
    structured: Mapping[str, Any] | None = None,
) -> None:
    """Queue the node run's row (`summary` becomes its `inhalt`, with how its structured
    calls ended under `strukturiert` when it made any); costs the node microseconds."""
    if structured:
        summary.setdefault(CONTENT_STRUCTURED, structured)
    pipeline_log.record(
        LogRow(
            source=graph,
            node=node,
            kind=KIND_NODE,
            turn_id=turn_id,
            duration_ms=round(elapsed_ms, 3),
            model_calls=calls,
            outcome=RESULT_OK if ok else RESULT_FAILED,
            content=summary,
            user_id=user_id,
            character_id=character_id,
            span_id=uuid.uuid4(),
        )
    )


def record_raw_turn(
    pipeline_log: PipelineLog,
    *,
    graph: str,
    node: str,
    turn_id: str | None,
    user_id: str,
    character_id: str,
    content: dict[str, Any],
) -> None:
    """Queue the `turn_roh` row of an answered turn (kept forever)."""
    pipeline_log.add(
        source=graph,
        node=node,
        kind=KIND_RAW_TURN,
        turn_id=turn_id,
        content=content,
        user_id=user_id,
        character_id=character_id,
    )


async def record_pending_writes(
    pool: AsyncConnectionPool,
    *,
    turn_id: str | None,
    user_id: str,
    character_id: str,
    source: str,
    writes: Sequence[PendingWrite],
    results: Sequence[str] = (),
    links: Sequence[str] = (),
) -> int:
    """Record every write with what became of it (`results`, else `WRITE_OPEN`), together
    with the `verbindung` rows (this turn → each new short-term key in `links`): all or
    none, in one round trip. If that fails, each is written alone, so a failure stays
    attached: a failed link is logged (the entry exists), a failed log write raises.
    Returns the rows logged."""
    rows = [
        LoggedWrite(
            turn_id=turn_id,
            user_id=user_id,
            character_id=character_id,
            source=source,
            target=write["target"],
            action=write["action"],
            data=write["data"],
            description=write.get("description", ""),
            result=results[index] if index < len(results) else WRITE_OPEN,
        )
        for index, write in enumerate(writes)
    ]
    link_rows = [(turn_id, key) for key in links]
    if not rows and not link_rows:
        return 0
    try:
        await pending_writes.insert(pool, rows, link_rows)
        return len(rows)
    except psycopg.Error as exc:
        if not link_rows:
            raise
        # nothing was written: write each alone, so a failure stays attached
        log.error("dispatcher: log and links failed together (%s); writing apart", exc)
    if rows:
        await pending_writes.insert(pool, rows)
    try:
        await pending_writes.insert(pool, links=link_rows)
    except psycopg.Error as link_exc:
        log.error("dispatcher: verbindung of %s not written: %s", list(links), link_exc)
    return len(rows)


async def record_uptake(conn: AsyncConnection[Any], row: UptakeRow) -> None:
    """Write the turn's uptake row on `conn` (the uptake node's connection, which may have
    read the offers on it)."""
    await uptake_log.insert(conn, row)
