"""The session as the graphs use it: read the turns and the summary, append a turn,
complete the user turn Path 1 stored early (docs/behaviour/memory.md#session).

The graph reaches the session store (`store/session.py`, its Lua and its decode cache)
only through here; a CharacterGraph run reads its session once, with the rest of its
turn context (`agents/turn_context.py`).
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import session


async def read(redis: aioredis.Redis, pair: Pair) -> list[dict[str, Any]]:
    """The pair's turns, oldest first (unreadable entries logged and skipped)."""
    return await session.read_turns(redis, pair)


async def read_summary(redis: aioredis.Redis, pair: Pair) -> str:
    """The summary of the older turns, "" if none."""
    return await session.read_summary(redis, pair)


async def append(redis: aioredis.Redis, pair: Pair, turn: dict[str, Any]) -> int:
    """Store one complete turn; the session's length after it."""
    return await session.append_turn(redis, pair, turn)


async def append_open(redis: aioredis.Redis, pair: Pair, turn: dict[str, Any]) -> int:
    """Store a turn whose late fields `complete` fills in; the session's length."""
    return await session.append_open_turn(redis, pair, turn)


async def complete(
    redis: aioredis.Redis, pair: Pair, turn_id: str, role: str, fields: dict[str, Any]
) -> tuple[dict[str, Any] | None, int | None]:
    """Set `fields` on the stored turn of `turn_id` and `role`: (the completed turn, the
    session's length), or (None, None) when the turn is no longer in the session."""
    return await session.complete_turn_counted(redis, pair, turn_id, role, fields)
