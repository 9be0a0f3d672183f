"""Which waiting call the one local model thread takes next: the answer's calls first.

The bundled model runs every call on one thread (llm/local.py), so a turn's calls queue.
A plain queue serves them in arrival order, and calls nobody waits for — Path 1's
dispatcher, the character's salience and dispatcher after the answer left, background
jobs — then hold the thread while the router, the composer or a judge waits, and the
answer comes seconds later than it needs to (bench/local_model.py measured ~5 s of
`human/dispatcher` inside a compact turn's wait). Here a call made on the answer's path
goes before any call made after it or outside a turn; within one urgency the order of
arrival stays. A later call also waits out the short gap between two answer calls
(`ANSWER_GRACE_S`), so it cannot slip in between and hold the next one up. Nothing is
dropped: a later call only waits longer, and the calls' own deadlines still apply.

Whose call it is comes from the accounting scope the node wrapper opens
(`accounting.current_label`: "character/router", "human/dispatcher", ...).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import IntEnum
from typing import Final
from weakref import WeakKeyDictionary

from novaberg.llm.accounting import current_label


class Urgency(IntEnum):
    """Lower goes first."""

    FINISH = 0
    """The answer's last round (the judges, the perception of the answer): its turn is
    nearest to release, and no answer call of that turn follows it."""
    ANSWER = 1
    LATER = 2


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

LAST_ROUND: Final = frozenset({"character/tribunal", "character/perception_assistant"})
"""The round before `evaluate` releases the answer (R5 in graph/character_graph.py)."""


def urgency_of(label: str) -> Urgency:
    """A call outside any node (a background job, an import) waits like a late one."""
    if not label or label in AFTER_THE_ANSWER:
        return Urgency.LATER
    if label in LAST_ROUND:
        return Urgency.FINISH
    return Urgency.ANSWER


ANSWER_GRACE_S: Final = 2.0
"""How long the thread stays kept for the answer after one of its calls ended (not after
the last round's: nothing of that turn follows). A turn's next answer call follows within
milliseconds to a second (graph work, a memory search); a later call that took the free
thread in that gap held the answer up for its whole length — Path 1's dispatcher, 5–6 s
on two cores. A later call waits out the gap instead (an anticipatory hold: the thread
idles at most this long per answer call)."""


class ModelLane:
    """One holder at a time; a released turn goes to the most urgent waiter, ties to the
    earliest, and to a later call only once no answer call (but the last round's) ended
    within `grace` seconds. Cancelled waiters are skipped."""

    def __init__(self, grace: float = ANSWER_GRACE_S) -> None:
        self._grace = grace
        self._held = False
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._answer_ended = -math.inf
        self._timer: asyncio.TimerHandle | None = None

    @asynccontextmanager
    async def turn(self, urgency: Urgency) -> AsyncIterator[None]:
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (int(urgency), next(self._order), granted))
        self._dispatch()
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self._release(answered=False)  # granted as it was cancelled: pass it on
            raise
        try:
            yield
        finally:
            self._release(answered=urgency is Urgency.ANSWER)

    def _release(self, *, answered: bool) -> None:
        self._held = False
        if answered:
            self._answer_ended = asyncio.get_running_loop().time()
        self._dispatch()

    def _dispatch(self) -> None:
        """Grant the thread to the first live waiter, unless it is a later call inside an
        answer's gap: then look again when the gap closes (an answer call coming first is
        granted at once)."""
        if self._held:
            return
        while self._waiting:
            urgency, _, granted = self._waiting[0]
            if granted.done():
                heapq.heappop(self._waiting)
                continue
            if urgency == Urgency.LATER:
                loop = asyncio.get_running_loop()
                gap = self._answer_ended + self._grace - loop.time()
                if gap > 0:
                    if self._timer is not None:
                        self._timer.cancel()
                    self._timer = loop.call_later(gap, self._dispatch)
                    return
            heapq.heappop(self._waiting)
            granted.set_result(None)
            self._held = True
            return


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
