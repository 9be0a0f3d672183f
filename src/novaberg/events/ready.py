"""Workers without polling: a pair that may have become startable is handed to the workers
on a list they wait on with a blocking read.

Every step that can make a pair startable puts it on `ready_pairs` — the intake with an
utterance, an event pushed, a run ended (the queue scripts do it in the same script), a
run superseded or parked, held events taken up. A worker moves one entry at a time into
its own `ready_taken` list (BLMOVE: the reliable-queue pattern of the processing lists),
offers the pair to its prompt and event consumer, and drops the entry; a dead worker's
taken entries go back to `ready_pairs` with its orphans. An entry is only a hint: the
consumers' scripts decide, and an entry for a pair with nothing to start costs two script
calls. So Redis commands per turn do not grow with workers or active pairs, and an idle
worker sends one blocking read per `WAIT_SECONDS` besides its heartbeat.

What a hint cannot carry is offered again here, not through Redis: a pair this worker
still runs (offered again when its task ends) and a pair refused a model slot (offered
again every `RETRY_SECONDS` while refused). A slow sweep over the active pairs every
`SWEEP_SECONDS` is the safety net for a hint lost between a step and its push (a crash,
an outage) and for a turn marker that expired by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence

import redis.asyncio as aioredis

from novaberg.events.consumer_base import Offer, PairConsumer
from novaberg.events.intake import pair_from_member
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.retry import FIRST_PAUSE, MAX_PAUSE, is_outage

log = logging.getLogger(__name__)

WAIT_SECONDS = 1.0
"""One blocking read's length (below the reply limit of store/redis_client.py): an idle
worker's one command a second, and how soon a stop is seen."""

RETRY_SECONDS = 0.05
"""How soon a pair refused a model slot is offered again (the slots free without a hint)."""

SWEEP_SECONDS = 30.0
"""Between two sweeps over every active pair: the bound on how long a lost hint delays a
pair."""


async def give_back(redis: aioredis.Redis, worker_id: str) -> int:
    """Move what `worker_id` had taken from the ready list back onto it; how many."""
    moved = 0
    while await redis.lmove(keys.ready_taken(worker_id), keys.ready_pairs(), "RIGHT", "LEFT"):
        moved += 1
    return moved


class ReadyPairs:
    """One worker's reader of the ready list, offering each pair to its consumers."""

    def __init__(
        self,
        redis: aioredis.Redis,
        worker_id: str,
        consumers: Sequence[PairConsumer],
        *,
        sweep_seconds: float = SWEEP_SECONDS,
        wait_seconds: float = WAIT_SECONDS,
    ) -> None:
        self.redis = redis
        self.worker_id = worker_id
        self.consumers = list(consumers)
        self.sweep_seconds = sweep_seconds
        self.wait_seconds = wait_seconds
        self.taken = keys.ready_taken(worker_id)
        self._refused: set[Pair] = set()
        """Pairs refused a model slot: offered again every RETRY_SECONDS."""
        self._busy: set[Pair] = set()
        """Pairs a consumer here still runs: offered again when its task ends."""
        self._due: set[Pair] = set()
        self._nudge = asyncio.Event()
        self._reading: asyncio.Task[str | None] | None = None
        """The blocking read under way (it outlives a step a nudge ended)."""
        for consumer in self.consumers:
            consumer.on_done = self._task_ended

    def _task_ended(self, pair: Pair) -> None:
        if pair in self._busy:
            self._busy.discard(pair)
            self._due.add(pair)
            self._nudge.set()

    async def offer(self, pair: Pair) -> None:
        """Offer `pair` to every consumer; remember it where one can start it only later."""
        results = [await consumer.offer(pair) for consumer in self.consumers]
        busy = any(
            result is Offer.LATER and pair in consumer.running_pairs
            for result, consumer in zip(results, self.consumers, strict=True)
        )
        refused = Offer.LATER in results and not busy
        (self._busy.add if busy else self._busy.discard)(pair)
        (self._refused.add if refused else self._refused.discard)(pair)

    async def sweep(self) -> None:
        for member in await self.redis.smembers(keys.active_pairs()):
            await self.offer(pair_from_member(str(member)))

    async def _read(self, wait: float) -> str | None:
        """The next hint, moved into this worker's taken list; None after `wait` seconds."""
        raw = await self.redis.blmove(  # type: ignore[misc]
            keys.ready_pairs(),
            self.taken,
            wait,  # type: ignore[arg-type]  # Redis takes fractions of a second
            "LEFT",
            "RIGHT",
        )
        return None if raw is None else str(raw)

    async def _step(self) -> None:
        """Offer what is due, then wait for the next hint, a nudge or (while a pair is
        refused a slot) `RETRY_SECONDS`; a read still under way is waited for at the
        next step."""
        self._nudge.clear()  # a task ending from here on ends the wait below at once
        for pair in [*self._due, *self._refused]:
            self._due.discard(pair)
            await self.offer(pair)
        if self._reading is None:
            self._reading = asyncio.create_task(self._read(self.wait_seconds))
        nudge = asyncio.create_task(self._nudge.wait())
        try:
            await asyncio.wait(
                {self._reading, nudge},
                timeout=RETRY_SECONDS if self._refused else None,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            nudge.cancel()
        if not self._reading.done():
            return
        read, self._reading = self._reading, None
        raw = read.result()
        if raw is not None:
            await self.offer(pair_from_member(str(raw)))
            await self.redis.lrem(self.taken, 1, raw)

    async def run(self, stop: asyncio.Event) -> None:
        await give_back(self.redis, self.worker_id)
        next_sweep = time.monotonic()  # first what became ready while no worker read
        pause = FIRST_PAUSE
        outage = False
        try:
            while not stop.is_set():
                try:
                    if time.monotonic() >= next_sweep:
                        await self.sweep()
                        next_sweep = time.monotonic() + self.sweep_seconds
                    await self._step()
                except Exception as exc:
                    if not is_outage(exc):
                        log.exception("ready list: offering failed")
                    elif not outage:
                        log.warning("ready list: Redis unreachable (%s); waiting", exc)
                    outage = is_outage(exc) or outage
                    pause = min(max(pause, FIRST_PAUSE) * 2, MAX_PAUSE)
                    next_sweep = time.monotonic()  # hints may have been lost meanwhile
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), pause)
                    continue
                if outage:
                    log.warning("ready list: Redis answers again")
                outage = False
                pause = FIRST_PAUSE
        finally:
            read, self._reading = self._reading, None
            if read is not None:
                read.cancel()
                with contextlib.suppress(BaseException):
                    await read
