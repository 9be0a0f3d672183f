"""The conversation vector's persisted trace (docs/behaviour/nodes.md#conversation-vector).

- `gv:detail:{u}:{c}`: the last turn's `gv_detail` as JSON; the next turn's enricher
  reads its `cluster` (the landscape) for the spreading depth and the search shift;
- `gv:vorturn:{u}:{c}`: `{antwort[:2000], modus}` of the last released answer.

Neither has a TTL (the landscape of a conversation outlives a session).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Final

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from novaberg.pair import Pair
from novaberg.store import keys

log = logging.getLogger(__name__)

ANSWER_CHARS: Final = 2000


def queue_turn_trace(
    pipe: aioredis.client.Pipeline,
    pair: Pair,
    detail: Mapping[str, Any] | None,
    answer: str | None,
    mode: str | None,
) -> list[str]:
    """Queue the writes of what there is (detail and/or answer) on `pipe`, so they share
    the caller's round trip; returns the keys."""
    written: list[str] = []
    if detail:
        pipe.set(
            keys.hypothesis_detail(pair), json.dumps(dict(detail), ensure_ascii=False, default=str)
        )
        written.append(keys.hypothesis_detail(pair))
    if answer:
        pipe.set(
            keys.previous_turn(pair),
            json.dumps({"antwort": answer[:ANSWER_CHARS], "modus": mode or ""}, ensure_ascii=False),
        )
        written.append(keys.previous_turn(pair))
    return written


async def load_detail(redis: aioredis.Redis, pair: Pair) -> dict[str, Any] | None:
    """The stored gv_detail; None when there is none or it is unreadable (logged)."""
    try:
        raw = await redis.get(keys.hypothesis_detail(pair))
    except RedisError as exc:
        log.error("gv:detail of %s unreadable: %s", pair, exc)
        return None
    return detail_from_raw(raw, pair)


def detail_from_raw(raw: Any, pair: Pair) -> dict[str, Any] | None:
    """`load_detail` of the stored value `raw` (read by the caller, e.g. with others)."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        log.error("gv:detail of %s is not JSON: %s", pair, exc)
        return None
    return value if isinstance(value, dict) else None


async def load_previous_turn(redis: aioredis.Redis, pair: Pair) -> dict[str, Any] | None:
    raw = await redis.get(keys.previous_turn(pair))
    if not raw:
        return None
    value = json.loads(raw)
    return value if isinstance(value, dict) else None
