"""What the prompt consumer and the event consumer share: wiring and the per-pair task
table (with the processing entry each task owns). Each subclass says how a pair offered
to it starts (`offer`); the worker's ready list (events/ready.py) offers the pairs."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from enum import Enum

import redis.asyncio as aioredis

from novaberg.events.delivery import Delivery
from novaberg.events.outcomes import FailureRecorder, Outcomes
from novaberg.events.queues import Claimed, TurnQueues
from novaberg.graph.contract import TurnGraphs
from novaberg.llm.gate import ModelGate
from novaberg.pair import Pair

log = logging.getLogger(__name__)


class Offer(Enum):
    """What a consumer made of a pair offered to it (`PairConsumer.offer`)."""

    STARTED = "started"
    NOTHING = "nothing"
    """Nothing to start, or someone else runs it: whoever frees it wakes it again."""
    LATER = "later"
    """Startable but not here and now (this consumer still runs the pair, or no model
    slot is free): offer it again soon."""


class PairConsumer:
    """Starts what pairs offered to it can start; at most one running task per pair in
    this worker."""

    label = "consumer"

    def __init__(
        self,
        redis: aioredis.Redis,
        graphs: TurnGraphs,
        gate: ModelGate,
        *,
        worker_id: str,
        delivery: Delivery | None = None,
        failures: FailureRecorder | None = None,
    ) -> None:
        self.redis = redis
        self.graphs = graphs
        self.gate = gate
        self.worker_id = worker_id
        self.queues = TurnQueues(redis, worker_id)
        self.delivery = delivery or Delivery(redis)
        self.outcomes = Outcomes(redis, self.delivery, failures)
        self._running: dict[Pair, asyncio.Task[None]] = {}
        self._owned: dict[Pair, str] = {}
        self.on_done: Callable[[Pair], None] | None = None
        """Called when a task of this consumer ends (the ready list offers its pair again)."""

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def running_pairs(self) -> set[Pair]:
        return set(self._running)

    def owned_entries(self) -> set[str]:
        """The processing entries (raw) that a running task of this consumer will end."""
        return set(self._owned.values())

    async def offer(self, pair: Pair) -> Offer:
        """Start the pair's next turn or event here if it can start now."""
        raise NotImplementedError

    def _start(self, pair: Pair, entry: Claimed, task: asyncio.Task[None]) -> None:
        """Register the task now running `entry` for `pair`."""
        self._running[pair] = task
        self._owned[pair] = entry.raw
        task.add_done_callback(self._forget(pair))

    def _forget(self, pair: Pair) -> Callable[[asyncio.Task[None]], None]:
        def done(_task: asyncio.Task[None]) -> None:
            self._running.pop(pair, None)
            self._owned.pop(pair, None)
            if self.on_done is not None:
                self.on_done(pair)

        return done
