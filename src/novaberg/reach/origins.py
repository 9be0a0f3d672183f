"""Where an utterance came from, for its outcome (`kanal_herkunft:{nachrichten_id}`): the
link id of the chat it was written in, or `IN_PLACE` for a client that waits for the
outcome in the same request (the OpenAI-compatible door). An utterance from the page has
no origin. Written right after the intake accepted it, long before its turn can end; read
by the sender (docs/behaviour/reach.md#which-channel)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import redis.asyncio as aioredis

from novaberg.store import keys

IN_PLACE: Final = 0
"""No link has id 0: an outcome naming it goes to no chat."""


async def note(redis: aioredis.Redis, message_id: str, link_id: int) -> None:
    await redis.set(keys.channel_origin(message_id), link_id, ex=keys.CHANNEL_ORIGIN_TTL)


async def forget(redis: aioredis.Redis, message_id: str) -> None:
    await redis.delete(keys.channel_origin(message_id))


async def answered_here(redis: aioredis.Redis, message_id: str) -> None:
    """The utterance's outcome is awaited where it was asked: a chat would only repeat it."""
    await note(redis, message_id, IN_PLACE)


async def of(redis: aioredis.Redis, message_ids: Sequence[str]) -> set[int]:
    """The origins of a turn's utterances."""
    if not message_ids:
        return set()
    found = await redis.mget([keys.channel_origin(m) for m in message_ids])
    return {int(v) for v in found if v is not None}
