"""Correcting the stored traces of one turn: its session items, its history rows and its
archive rows (docs/behaviour/events.md#message-controls).

The person may take back or change their last message, and ask for another answer. What a
turn left behind is keyed by its turn id in three places this module edits: the session
(`session:{u}:{c}:turns`, Redis), the history (`pipeline_log` rows `turn_roh` and
`turn_gescheitert`) and the conversation archive (`gespraechsarchiv`). Short-term memory is
edited through `ShortTermStore`; the caller (events/turn_controls.py) decides what goes.

Session items are removed or replaced by compare and set (the item exactly as read), so a
concurrent `complete_turn` or summary trim is never overwritten: a lost race is read again.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import orjson
import redis.asyncio as aioredis
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store import session_lua as lua
from novaberg.store.archive import TABLE as ARCHIVE
from novaberg.store.pipeline_log import KIND_FAILED_TURN, KIND_RAW_TURN
from novaberg.store.scripts import script

log = logging.getLogger(__name__)

WINDOW: Final = 8
"""The newest session items looked at first (the last turn is among them)."""

RETRIES: Final = 5


def _decode(item: Any) -> dict[str, Any] | None:
    text = item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


async def last_turns(redis: aioredis.Redis, pair: Pair, count: int = 2) -> list[dict[str, Any]]:
    """The newest `count` session turns, oldest first."""
    raw = await redis.lrange(keys.session_turns(pair), -count, -1)
    return [turn for turn in map(_decode, raw) if turn is not None]


async def remove_session_turns(
    redis: aioredis.Redis, pair: Pair, turn_id: str, roles: tuple[str, ...]
) -> list[dict[str, Any]]:
    """Remove the session items of `turn_id` with a role in `roles`; the removed turns."""
    key = keys.session_turns(pair)
    find = script(redis, lua.FIND)
    removed: list[dict[str, Any]] = []
    for _ in range(RETRIES):
        found = await find(keys=[key], args=[turn_id, WINDOW])
        pending = [
            (raw, turn)
            for raw, turn in ((raw, _decode(raw)) for raw in found[2::2])
            if turn is not None and turn.get("turn_id") == turn_id and turn.get("rolle") in roles
        ]
        if not pending:
            return removed
        lost = False
        for raw, turn in pending:
            if int(await redis.lrem(key, -1, raw)) == 1:
                removed.append(turn)
            else:
                lost = True  # completed or trimmed meanwhile: read again
        if not lost:
            return removed
    log.error("session %s: turn %s not removed after %d tries", pair, turn_id, RETRIES)
    return removed


async def replace_session_text(
    redis: aioredis.Redis, pair: Pair, turn_id: str, role: str, text: str
) -> bool:
    """Give the session item of `turn_id` and `role` the text `text` (compare and set)."""
    key = keys.session_turns(pair)
    find = script(redis, lua.FIND)
    swap = script(redis, lua.SWAP)
    for _ in range(RETRIES):
        found = await find(keys=[key], args=[turn_id, WINDOW])
        for index, raw in zip(found[1::2], found[2::2], strict=True):
            turn = _decode(raw)
            if turn is None or turn.get("turn_id") != turn_id or turn.get("rolle") != role:
                continue
            turn["inhalt"] = text
            replaced = orjson.dumps(turn).decode("utf-8")
            if int(await swap(keys=[key], args=[int(index), raw, replaced])) >= 0:
                return True
            break  # moved meanwhile: read again
        else:
            return False
    return False


# --- history (pipeline_log) and archive --------------------------------------------------

_DELETE_HISTORY: Final = (
    "DELETE FROM pipeline_log WHERE user_id = %s AND character_id = %s AND turn_id = %s"
    f" AND art IN ('{KIND_RAW_TURN}', '{KIND_FAILED_TURN}')"
)

_SET_ANSWER: Final = (
    "UPDATE pipeline_log SET inhalt = inhalt || %s WHERE id = ("
    "SELECT max(id) FROM pipeline_log WHERE user_id = %s AND character_id = %s"
    f" AND turn_id = %s AND art = '{KIND_RAW_TURN}')"
)

_DELETE_ARCHIVE: Final = (
    f"DELETE FROM {ARCHIVE} WHERE user_id = %s AND character_id = %s AND turn_id = %s"
    " AND sprecher = ANY(%s)"
)


async def delete_history(pool: AsyncConnectionPool, pair: Pair, turn_id: str) -> int:
    """Remove the turn's history rows (answered or failed); how many went."""
    async with pool.connection() as conn:
        cur = await conn.execute(_DELETE_HISTORY, (pair.user_id, pair.character_id, turn_id))
        return cur.rowcount


async def set_history_answer(pool: AsyncConnectionPool, pair: Pair, turn_id: str, text: str) -> int:
    """Put `text` as the answer of the turn's newest history row; 1 if there was one."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            _SET_ANSWER, (Jsonb({"response": text}), pair.user_id, pair.character_id, turn_id)
        )
        return cur.rowcount


async def delete_archive(
    pool: AsyncConnectionPool, pair: Pair, turn_id: str, speakers: tuple[str, ...]
) -> int:
    """Remove the turn's archive rows of `speakers` (a row's text never changes: a corrected
    text is a removed row); how many went."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            _DELETE_ARCHIVE, (pair.user_id, pair.character_id, turn_id, list(speakers))
        )
        return cur.rowcount
