"""Pausing and activating a character for one person (docs/behaviour/events.md#paused-characters).

`pause` and `activate` are what the API and the CLI call. The active flag is the record
(`charakter_aktivierung`, per user and character); the events of a paused pair are held in
Redis (events/parked.py). `PauseGuard` is the workers' side: the event consumer asks it
before running an event, and the housekeeping sweeps the held events.

No event stays held while its character is active, whatever the order of the steps: an
activation writes the flag first and then takes the held events up; a worker holds an event
first and then reads the flag again, taking it up itself when the character was activated
meanwhile; and the sweep takes up the held events of every pair it finds active.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.events.event_consumer import raw_identity, raw_prompts
from novaberg.events.outcomes import PAUSED, Outcomes
from novaberg.events.parked import ParkedEvents, TakenUp, take_up
from novaberg.events.queues import Claimed, TurnQueues
from novaberg.pair import Pair
from novaberg.store import character_activation

log = logging.getLogger(__name__)


async def pause(pool: AsyncConnectionPool, pair: Pair, now: datetime) -> None:
    """The user pauses the character: from now on its events are held, not run (a run
    already going on ends as usual)."""
    await character_activation.set_active(pool, pair, False, now)
    log.info("character %s paused for %s", pair.character_id, pair.user_id)


async def activate(
    pool: AsyncConnectionPool, redis: aioredis.Redis, pair: Pair, now: datetime
) -> TakenUp:
    """The user activates the character again; what was held is queued to be answered."""
    await character_activation.set_active(pool, pair, True, now)
    taken = await take_up(redis, pair, now.timestamp())
    log.info(
        "character %s active for %s; %d held event(s) taken up (%d message(s))",
        pair.character_id,
        pair.user_id,
        taken.events,
        taken.messages,
    )
    return taken


class PauseGuard:
    """A worker's side of paused characters: hold, and sweep what is held."""

    def __init__(
        self,
        redis: aioredis.Redis,
        pool: AsyncConnectionPool,
        queues: TurnQueues,
        outcomes: Outcomes,
        hold_seconds: float,
    ) -> None:
        self.redis = redis
        self.pool = pool
        self.queues = queues
        self.outcomes = outcomes
        self.parked = ParkedEvents(redis, queues, hold_seconds)

    async def hold_if_paused(self, pair: Pair, entry: Claimed) -> bool:
        """Hold the claimed event `entry` if the user has paused the character; True when
        the event is no longer this run's to run."""
        if not await character_activation.is_paused(self.pool, pair):
            return False
        if await self.parked.park(pair, entry):
            log.info("event of %s held: the character is paused", pair)
            if not await character_activation.is_paused(self.pool, pair):
                await take_up(self.redis, pair, time.time())  # activated in between
        return True

    async def sweep(self, now: float) -> int:
        """Take up the held events of pairs active again; end those held longer than the
        hold time (`turn_gescheitert`, `charakter_pausiert`). Returns how many it ended."""
        ended = 0
        for pair in await self.parked.pairs():
            held = await self.parked.held(pair)
            if not held or not await character_activation.is_paused(self.pool, pair):
                await take_up(self.redis, pair, now)
                continue
            for raw in self.parked.due(held, now):
                entry = await self.parked.unpark_one(pair, raw)
                if entry is not None:
                    await self._end(pair, entry, raw)
                    ended += 1
        return ended

    async def _end(self, pair: Pair, entry: Claimed, raw: str) -> None:
        hold = int(self.parked.hold_seconds)
        turn_id, ids, count = raw_identity(raw)
        if turn_id:
            await self.outcomes.fail(
                pair.user_id,
                pair.character_id,
                turn_id,
                count,
                ids,
                f"{PAUSED} (nach {hold} s nicht aktiviert)",
                raw_prompts(raw),
            )
        await self.queues.finish(pair, entry, release_marker=False)
