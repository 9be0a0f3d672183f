"""The channel outbox: a reliable queue of outcomes for the person's other channels.

The outcome script (events/delivery_lua.py) appends `{user_id, seq}` to the user's own
outbox `kanal_postfach:{u}` in the same atomic step that logs the message, for users with a
working link; the process that sent the outcome then moves it on to `kanal_ausgang` (two
hash slots: no one script may touch both in a Redis Cluster). The user was added to
`kanal_postfach_nutzer` before the script ran, so what a crash leaves in a user's outbox
is moved on by `collect` (at the start of leading and every `COLLECT_EVERY` seconds). The one
process holding the channel lease (reach/lead.py) moves an item into `kanal_ausgang_arbeit`
(LMOVE: the item is always in exactly one list), sends it, then removes it. A sender that
dies leaves its item in the work list; the next holder of the lease moves it back to the
front of the outbox first. An item whose send failed transiently waits in
`kanal_ausgang_wiederholung` (score = due time) and returns to the outbox when due.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import redis.asyncio as aioredis

from novaberg.events.delivery import forward_outbox
from novaberg.store import keys

COLLECT_EVERY = 10.0
"""Seconds between sweeps of the users' own outboxes (only a crash leaves items there)."""


@dataclass(frozen=True)
class Item:
    user_id: str
    seq: int
    attempt: int = 0
    """Transient failures so far."""

    def encode(self) -> str:
        return json.dumps({"user_id": self.user_id, "seq": self.seq, "versuch": self.attempt})

    @classmethod
    def decode(cls, raw: str) -> Item | None:
        try:
            body = json.loads(raw)
            return cls(str(body["user_id"]), int(body["seq"]), int(body.get("versuch") or 0))
        except (ValueError, KeyError, TypeError):
            return None


class Outbox:
    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self._next_collect = 0.0

    async def collect(self) -> int:
        """Move what is left in the users' own outboxes on to the channel outbox; a user
        leaves the set only once their outbox is empty (checked again after the removal,
        since an outcome may have added them meanwhile)."""
        moved = 0
        for member in await self.redis.smembers(keys.channel_outbox_users()):
            user_id = str(member)
            moved += await forward_outbox(self.redis, user_id)
            await self.redis.srem(keys.channel_outbox_users(), user_id)
            if await self.redis.llen(keys.channel_user_outbox(user_id)):
                await self.redis.sadd(keys.channel_outbox_users(), user_id)
        return moved

    async def recover(self) -> int:
        """Move what a previous sender was working on back to the front, and what a crash
        left in the users' own outboxes to the end; returns how many."""
        moved = await self.collect()
        while await self.redis.lmove(
            keys.channel_outbox_work(), keys.channel_outbox(), "RIGHT", "LEFT"
        ):
            moved += 1
        return moved

    async def take(self, wait_seconds: int) -> str | None:
        """The next item, now in the work list; None if none came within `wait_seconds`."""
        raw = await self.redis.blmove(
            keys.channel_outbox(), keys.channel_outbox_work(), wait_seconds, "LEFT", "RIGHT"
        )
        return None if raw is None else str(raw)

    async def done(self, raw: str) -> None:
        await self.redis.lrem(keys.channel_outbox_work(), 1, raw)

    async def later(self, raw: str, item: Item, due: float) -> None:
        """Park the item until `due` (one more attempt counted), out of the work list."""
        retry = Item(item.user_id, item.seq, item.attempt + 1)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(keys.channel_retry(), {retry.encode(): due})
            pipe.lrem(keys.channel_outbox_work(), 1, raw)
            await pipe.execute()

    async def release_due(self, now: float) -> int:
        """Items whose pause is over go back to the end of the outbox (and, every
        `COLLECT_EVERY` seconds, what a crash left in the users' own outboxes)."""
        if now >= self._next_collect:
            self._next_collect = now + COLLECT_EVERY
            await self.collect()
        due = [str(m) for m in await self.redis.zrangebyscore(keys.channel_retry(), "-inf", now)]
        if not due:
            return 0
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(keys.channel_outbox(), *due)
            pipe.zrem(keys.channel_retry(), *due)
            await pipe.execute()
        return len(due)
