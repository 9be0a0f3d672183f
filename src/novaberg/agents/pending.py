"""The open question of a task agent: Redis `pending_agent:{user_id}` (TTL 300 s).

Why it lives in Redis and not in the graph: the answer arrives in the *next*
turn, possibly in another worker process (docs/behaviour/agents.md#open-questions). The
router reads it without a model call; the agent's dispatch deletes it before resuming and
stores it again if it asks again. While it exists, self-triggers and proactive impulses
for the user are suppressed.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import redis.asyncio as aioredis

from novaberg.store import keys

log = logging.getLogger(__name__)

__all__ = [
    "clear_pending",
    "has_pending",
    "pending_question",
    "store_pending",
    "take_pending",
]

PENDING_FIELDS = ("agent_name", "action", "target", "rueckfrage", "parameter")
"""Wire fields of the stored JSON."""


async def store_pending(
    redis: aioredis.Redis,
    user_id: str,
    *,
    agent_name: str,
    action: str,
    target: str,
    rueckfrage: str,
    parameter: dict[str, Any],
) -> None:
    """Store (or replace) the user's open question with a fresh 300 s TTL."""
    payload = {
        "agent_name": agent_name,
        "action": action,
        "target": target,
        "rueckfrage": rueckfrage,
        "parameter": parameter,
    }
    await redis.set(
        keys.pending_agent(user_id),
        json.dumps(payload, ensure_ascii=False, default=str),
        ex=keys.PENDING_AGENT_TTL,
    )


async def pending_question(redis: aioredis.Redis, user_id: str) -> dict[str, Any] | None:
    """The open question, or None. An unreadable value is logged and reported as None."""
    return pending_from_raw(await redis.get(keys.pending_agent(user_id)), user_id)


def pending_from_raw(raw: Any, user_id: str) -> dict[str, Any] | None:
    """`pending_question` of the stored value `raw` (read by the caller, e.g. with others)."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        log.warning("pending_agent:%s holds unreadable JSON; ignored", user_id)
        return None
    if not isinstance(data, dict) or not data.get("agent_name"):
        log.warning("pending_agent:%s has no agent_name; ignored", user_id)
        return None
    data.setdefault("parameter", {})
    return data


async def has_pending(redis: aioredis.Redis, user_id: str) -> bool:
    """Cheap check for the event consumer and Pixie delivery (suppress impulses)."""
    return bool(await redis.exists(keys.pending_agent(user_id)))


async def take_pending(redis: aioredis.Redis, user_id: str) -> dict[str, Any] | None:
    """Read and delete atomically: a resume consumes the question exactly once."""
    raw = await redis.getdel(keys.pending_agent(user_id))
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        log.warning("pending_agent:%s held unreadable JSON; dropped", user_id)
        return None
    return data if isinstance(data, dict) else None


async def clear_pending(redis: aioredis.Redis, user_id: str) -> None:
    await redis.delete(keys.pending_agent(user_id))
