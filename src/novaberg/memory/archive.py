"""Writing the conversation archive: live turns (the dispatcher), vectors that failed.

Every session turn is archived too (store/archive.py has the table and its idempotency
invariant): the user's block of utterances with the vector the enricher already computed,
the character's answer embedded here — after the answer has left, so it costs the person
nothing. A failed embedding stores the row without vectors (words still find it) and is
logged; `fill_missing_vectors` (the daily background job) embeds it later.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import numpy as np
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.llm.errors import ModelError
from novaberg.memory.long_term.decay import LOG_RETENTION_DAYS
from novaberg.pair import Pair
from novaberg.store import archive
from novaberg.store.text_search import text_config
from novaberg.wire import FIELD_MESSAGE_IDS, ROLE_USER

log = logging.getLogger(__name__)

BACKFILL_BATCH: Final = 256
"""Rows without vectors embedded per background run (one embedding call per batch)."""


def live_source_id(turn_id: str | None, speaker: str, round_: int) -> str:
    """`quell_id` of a live row: the turn, the speaker and the self-trigger round (a thinker
    retry keeps the turn id and answers again)."""
    if not turn_id:  # no idempotency without a turn id; never collide with another row
        log.warning("archive: a %s turn without turn_id; archived under a fresh id", speaker)
        turn_id = f"ohne-turn-{uuid.uuid4().hex}"
    return f"{turn_id}:{speaker}:{round_}"


async def embed_or_none(model: LLM, text: str) -> np.ndarray | None:
    try:
        return np.asarray((await model.embed([text]))[0], dtype=np.float32)
    except (ModelError, OSError, RuntimeError) as exc:
        log.error("archive: embedding failed (%s); the row is kept without vectors", exc)
        return None


async def archive_live_turn(
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    *,
    speaker: str,
    text: str,
    time: datetime,
    turn_id: str | None,
    message_ids: Sequence[str],
    origin: str,
    round_: int = 0,
    embedding: Sequence[float] | np.ndarray | None = None,
) -> int | None:
    """Archive one live turn; its id, or None if it was archived already."""
    row = await live_row(
        model,
        pair,
        speaker=speaker,
        text=text,
        time=time,
        turn_id=turn_id,
        message_ids=message_ids,
        origin=origin,
        round_=round_,
        embedding=embedding,
    )
    async with pool.connection() as conn:
        return await archive.insert_live(conn, row)


async def live_row(
    model: LLM,
    pair: Pair,
    *,
    speaker: str,
    text: str,
    time: datetime,
    turn_id: str | None,
    message_ids: Sequence[str],
    origin: str,
    round_: int = 0,
    embedding: Sequence[float] | np.ndarray | None = None,
) -> archive.ArchiveRow:
    """The archive row of one live turn, `text` embedded unless its `embedding` is given
    (the dispatcher writes it with its other rows, in one round trip)."""
    vector = (
        np.asarray(embedding, dtype=np.float32)
        if embedding is not None
        else await embed_or_none(model, text)
    )
    return archive.ArchiveRow(
        pair=pair,
        speaker=speaker,
        text=text,
        time=time,
        origin=origin,
        source=archive.SOURCE_LIVE,
        source_id=live_source_id(turn_id, speaker, round_),
        language=text_config(text),
        turn_id=turn_id,
        message_ids=tuple(message_ids),
        embedding=vector,
    )


async def purge_expired(pool: AsyncConnectionPool, now: float) -> int:
    """The yearly retention: unpinned rows archived more than `LOG_RETENTION_DAYS` ago go.
    Counted from when a row entered the archive, so imported history gets its year too."""
    before = datetime.fromtimestamp(now, UTC) - timedelta(days=LOG_RETENTION_DAYS)
    async with pool.connection() as conn:
        return await archive.purge(conn, before)


async def fill_missing_vectors(
    pool: AsyncConnectionPool, model: LLM, *, limit: int = BACKFILL_BATCH
) -> int:
    """Embed up to `limit` rows stored without vectors; how many were filled."""
    async with pool.connection() as conn:
        rows = await archive.missing_vectors(conn, limit)
    if not rows:
        return 0
    vectors = await model.embed([text for _, text in rows])
    async with pool.connection() as conn:
        for (row_id, _), vector in zip(rows, vectors, strict=True):
            await archive.set_vector(conn, row_id, np.asarray(vector, dtype=np.float32))
    return len(rows)


async def archive_session_turn(
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    turn: Mapping[str, Any] | None,
    round_: int = 0,
) -> int | BaseException | None:
    """Archive a session turn as stored (the user's with its prompt vector, the answer
    embedded here): the row's id, None (no turn, or archived already) or the failure —
    returned, never raised: the conversation goes on without it. The dispatcher starts it
    with its memory writes, so the server's index work on the row (about a millisecond)
    overlaps theirs instead of being waited for after them."""
    if turn is None:
        return None
    user = turn["rolle"] == ROLE_USER
    try:
        row = await live_row(
            model,
            pair,
            speaker=archive.SPEAKER_USER if user else archive.SPEAKER_CHARACTER,
            text=str(turn["inhalt"]),
            time=datetime.fromtimestamp(float(turn["zeit"]), UTC),
            turn_id=turn.get("turn_id"),
            message_ids=[str(i) for i in turn.get(FIELD_MESSAGE_IDS) or []],
            origin=str(turn.get("herkunft") or ""),
            round_=round_,
            embedding=turn.get("embedding") if user else None,
        )
    except Exception as exc:  # a row that cannot be built is the archive's failure
        return exc
    try:
        async with pool.connection() as conn:
            return await archive.insert_live(conn, row)
    except Exception as exc:  # reported in the dispatcher's row, like any archive failure
        return exc
