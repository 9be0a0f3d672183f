"""Which waiting call the one local model thread takes next: the answer's calls first.

The bundled model runs every call on one thread (llm/local.py), so a turn's calls queue.
A plain queue serves them in arrival order, and calls nobody waits for — Path 1's
dispatcher, the character's salience and dispatcher after the answer left, background
jobs — then hold the thread while the router, the composer or a judge waits, and the
answer comes seconds later than it needs to (bench/local_model.py measured ~5 s of
`human/dispatcher` inside a compact turn's wait). Here a call made on the answer's path
goes before any call made after it or outside a turn; within one urgency the order of
arrival stays. Nothing is dropped or reordered past its deadline: a later call only
waits longer, and the calls' own deadlines still apply.

Whose call it is comes from the accounting scope the node wrapper opens
(`accounting.current_label`: "character/router", "human/dispatcher", ...).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import IntEnum
from typing import Final
from weakref import WeakKeyDictionary

from novaberg.llm.accounting import current_label


class Urgency(IntEnum):
    """Lower goes first."""

    ANSWER = 0
    LATER = 1


AFTER_THE_ANSWER: Final = frozenset(
    {
        "human/dispatcher",
        "character/salience",
        "character/dispatcher",
        "character/imprint",
        "character/uptake",
    }
)
"""Nodes whose calls run after the answer was released or beside it without being read
before it (docs/behaviour/nodes.md: Path 1's dispatcher ends the HumanGraph after its tail
went to the character; the CharacterGraph's nodes after `ei_calc_persist`). Path 1's
salience is *not* here: the character's enricher waits for it."""


def urgency_of(label: str) -> Urgency:
    """A call outside any node (a background job, an import) waits like a late one."""
    if not label or label in AFTER_THE_ANSWER:
        return Urgency.LATER
    return Urgency.ANSWER


class ModelLane:
    """One holder at a time; a released turn goes to the most urgent waiter, ties to the
    earliest. Cancelled waiters are skipped."""

    def __init__(self) -> None:
        self._held = False
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    @asynccontextmanager
    async def turn(self, urgency: Urgency) -> AsyncIterator[None]:
        if self._held or self._waiting:
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiting, (int(urgency), next(self._order), granted))
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._release()  # the turn came as the waiter was cancelled: pass it on
                raise
        else:
            self._held = True
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self._waiting:
            granted = heapq.heappop(self._waiting)[2]
            if not granted.done():
                granted.set_result(None)
                return
        self._held = False


_lanes: WeakKeyDictionary[asyncio.AbstractEventLoop, ModelLane] = WeakKeyDictionary()


def lane() -> ModelLane:
    """The running loop's lane (the model thread is the process's; its queue is the loop's)."""
    loop = asyncio.get_running_loop()
    found = _lanes.get(loop)
    if found is None:
        found = _lanes[loop] = ModelLane()
    return found


def current_urgency() -> Urgency:
    return urgency_of(current_label())
