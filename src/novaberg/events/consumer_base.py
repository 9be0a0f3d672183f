"""What the prompt consumer and the event consumer share: wiring, the per-pair task
table and the poll loop. Each subclass says how one poll starts turns."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import redis.asyncio as aioredis

from novaberg.events.delivery import Delivery
from novaberg.events.outcomes import Outcomes
from novaberg.events.queues import TurnQueues
from novaberg.graph.contract import TurnGraphs
from novaberg.llm.gate import ModelGate
from novaberg.store import keys

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.05
"""Seconds between polls of the active pairs (a 1 s poll would add up to a second to every
answer)."""


class PairConsumer:
    """Polls every active pair; at most one running task per pair in this worker."""

    label = "consumer"

    def __init__(
        self,
        redis: aioredis.Redis,
        graphs: TurnGraphs,
        gate: ModelGate,
        *,
        worker_id: str,
        delivery: Delivery | None = None,
        poll_interval: float = POLL_INTERVAL,
    ) -> None:
        self.redis = redis
        self.graphs = graphs
        self.gate = gate
        self.worker_id = worker_id
        self.queues = TurnQueues(redis, worker_id)
        self.delivery = delivery or Delivery(redis)
        self.outcomes = Outcomes(redis, self.delivery)
        self.poll_interval = poll_interval
        self._running: dict[keys.Pair, asyncio.Task[None]] = {}

    @property
    def running(self) -> int:
        return len(self._running)

    async def poll_once(self) -> int:
        raise NotImplementedError

    def _forget(self, pair: keys.Pair) -> Callable[[asyncio.Task[None]], None]:
        def done(_task: asyncio.Task[None]) -> None:
            self._running.pop(pair, None)

        return done

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.poll_once()
            except Exception:
                log.exception("%s poll failed", self.label)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.poll_interval)
