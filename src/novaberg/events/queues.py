"""Atomic queue and turn-marker operations (docs/behaviour/events.md#queues,
docs/behaviour/events.md#turn-marker).

The turn marker `turn_laeuft:{u}:{c}` spans both halves of a turn. Its value
says who holds it:

- `<turn_id>` — the prompt consumer took it; Path 1 runs; the turn's event is
  not claimed yet. Only the event carrying that turn_id may claim it.
- `<turn_id>@<worker_id>` — an event consumer is running that turn's
  CharacterGraph. Nothing else of the pair may start.

Work in progress is always visible in the worker's processing list (an entry
per block or event), so a worker that dies leaves recoverable orphans. Each
script below is one atomic step; the queues stay consistent whichever process
dies between two steps.

Supersede: a user turn whose answer has not left yet is abandoned when the user
has written on within the block window (`supersede`). Its nachrichten_ids move
to `uebertragene_ids:{u}:{c}` in the same step that frees the marker, drops
the claimed event and tells the client, and the next `begin_turn` moves them
into its block entry — so at every moment the ids sit in exactly one durable
place (processing entry, carried list, or the next event) and still end in one
outcome. The number of runs given up in a row travels the same way
(`uebertragen_runden:{u}:{c}` → the block's `runden`), so the event consumer can stop
superseding after `MAX_SUPERSEDES`.

Redis outages: every step that ends or moves on a run (`finish`, `supersede`,
`refresh_marker`, `hand_back`) may run twice — a reply lost after the server executed
it is answered by running it again (store/retry.py) — so each acts only while the
entry is still in the processing list and does nothing the second time. Starting steps
(`begin_turn`, `claim_event`) are not retried: one whose reply was lost leaves an entry
no task owns, which the worker's housekeeping ends or hands back (events/worker.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import weakref
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import redis.asyncio as aioredis

from novaberg.events import queues_lua as lua
from novaberg.events.delivery import (
    LOG_KEEP,
    LOG_MAX_AGE,
    delivery_keys,
    wire_body,
)
from novaberg.events.held_delivery import HOLD, HeldDelivery
from novaberg.events.intake import pair_from_member, pair_member
from novaberg.events.model import INTAKE_WINDOW_SECONDS, Event, WireMessage
from novaberg.events.resp import LuaScript
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.redis_client import is_cluster
from novaberg.store.retry import until_redis_back
from novaberg.store.scripts import script

log = logging.getLogger(__name__)

HELD_SUPERSEDE = LuaScript(lua.SUPERSEDE)
"""`SUPERSEDE` as the cluster path runs it (events/held_delivery.py)."""

MAX_BLOCK = 100
"""Most utterances cut into one block; the rest waits for the next turn."""

MAX_EVENT_SCAN = 200
"""How deep the event consumer looks for the event owning the marker."""


class Supersede(IntEnum):
    """What a supersede check found (falsy: the run goes on)."""

    KEPT = 0
    """The user did not write on (or the run may not be abandoned): run on."""
    SUPERSEDED = 1
    """Abandoned now: the ids were carried over, the marker and the entry are gone."""
    GONE = 2
    """The entry had already left the processing list — abandoned by an earlier attempt
    of this step whose reply was lost, or adopted by a rescuer: run no further."""


@dataclass(frozen=True)
class Claimed:
    """One processing-list entry: a cut block or a claimed event."""

    raw: str
    data: dict[str, Any]

    @classmethod
    def parse(cls, raw: str) -> Claimed:
        try:
            data = json.loads(raw)
        except ValueError:
            data = {}
        return cls(raw, data if isinstance(data, dict) else {})

    @property
    def kind(self) -> str:
        return str(self.data.get("art"))

    @property
    def carried(self) -> list[str]:
        """Ids of superseded runs this block took over (answered with it, named first)."""
        value = self.data.get("uebertragen")
        return [str(i) for i in value] if isinstance(value, list) else []

    @property
    def carried_rounds(self) -> int:
        """How many runs in a row were superseded before this block (0: none)."""
        value = self.data.get("runden")
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    @property
    def marker(self) -> str:
        """The marker value this entry holds."""
        if self.kind == "block":
            return str(self.data["turn_id"])
        return str(self.data.get("marker", ""))

    @property
    def pair(self) -> Pair | None:
        if self.kind == "block":
            try:
                return Pair(str(self.data["user_id"]), str(self.data["character_id"]))
            except KeyError:
                return None
        try:
            event = json.loads(self.data["raw"])
            return Pair(str(event["user_id"]), str(event["character_id"]))
        except (ValueError, KeyError, TypeError):
            return None


INDEX_KEEP_SECONDS = 300.0
"""A pair whose list is known empty stays in the worker's index this long after its last
claim, so the safety sweep's claim attempts on a long-running pair cost no `SADD` each."""


class _IndexState:
    """What every `TurnQueues` of one worker shares (the worker's and its consumers'): the
    pairs in the worker's index (with when a claim last used each), the pairs whose list
    may hold entries (`dirty`: a claim moved one in, or its reply was lost), the claims in
    flight, and the lock that keeps a prune from dropping a pair a claim is about to use.
    Only dirty lists are read (housekeeping, stop): a claim whose reply said "nothing"
    left its list as it was."""

    def __init__(self) -> None:
        self.indexed: dict[Pair, float] = {}
        self.dirty: set[Pair] = set()
        self.claiming: Counter[Pair] = Counter()
        self.lock = asyncio.Lock()


@dataclass
class Claim:
    """One step that may move an entry into a processing list: `moved` False once its
    reply said nothing moved (None — no reply, an error — counts as maybe)."""

    moved: bool | None = None


_INDEX_STATES: weakref.WeakValueDictionary[str, _IndexState] = weakref.WeakValueDictionary()
"""worker id → its shared index state, while some `TurnQueues` of the worker lives."""


class TurnQueues:
    """The scripts, bound to one Redis client and one worker's processing lists.

    A worker's processing lists are per pair (`event_processing:{u}:c:<worker>`, in the
    pair's slot, so every queue script stays in one slot); the worker's index
    (`bearbeitung:{<worker>}`) names the pairs whose list may hold entries, for orphan
    recovery. A pair enters the index before the first script that may move an entry into
    its list (`claiming`), and leaves it in `prune` once its list is empty — never while a
    claim of it is in flight in this process (the two share `_index_lock`)."""

    def __init__(self, redis: aioredis.Redis, worker_id: str) -> None:
        if "@" in worker_id:
            raise ValueError("a worker id must not contain '@' (marker syntax)")
        self.redis = redis
        self.worker_id = worker_id
        self.index = keys.processing_index(worker_id)
        shared = _INDEX_STATES.get(worker_id)
        if shared is None:
            shared = _INDEX_STATES[worker_id] = _IndexState()
        self._state = shared
        self._indexed = shared.indexed
        self._dirty = shared.dirty
        self._claiming = shared.claiming
        self._index_lock = shared.lock
        self._ready = script(redis, lua.READY)
        self._begin = script(redis, lua.BEGIN_TURN)
        self._claim = script(redis, lua.CLAIM_EVENT)
        self._finish = script(redis, lua.FINISH)
        self._refresh = script(redis, lua.REFRESH)
        self._supersede = script(redis, lua.SUPERSEDE)
        self._held = HeldDelivery(redis) if is_cluster(redis) else None
        self._hand_back = script(redis, lua.HAND_BACK)

    def processing(self, pair: Pair) -> str:
        """This worker's processing list of `pair`."""
        return keys.processing_list(pair, self.worker_id)

    @contextlib.asynccontextmanager
    async def claiming(self, pair: Pair) -> AsyncIterator[Claim]:
        """Around any step that may move an entry into this worker's list of `pair`: the
        pair is in the index before the step runs and stays there while it runs; the list
        counts as dirty afterwards unless the step set `Claim.moved = False`."""
        async with self._index_lock:
            if pair not in self._indexed:
                await self.redis.sadd(self.index, pair_member(pair))
            self._indexed[pair] = time.monotonic()
            self._claiming[pair] += 1
        claim = Claim()
        try:
            yield claim
        finally:
            if claim.moved is not False:
                self._dirty.add(pair)
            self._claiming[pair] -= 1
            if self._claiming[pair] <= 0:
                del self._claiming[pair]

    async def prune(self) -> int:
        """Housekeeping: a dirty list found empty is clean again; a clean pair unused for
        `INDEX_KEEP_SECONDS` leaves the index. Returns how many left. Costs nothing while
        no list is dirty and no pair is due."""
        async with self._index_lock:
            dirty = [pair for pair in self._dirty if not self._claiming.get(pair)]
            if dirty:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for pair in dirty:
                        pipe.llen(self.processing(pair))
                    lengths = await pipe.execute()
                self._dirty.difference_update(
                    pair for pair, n in zip(dirty, lengths, strict=True) if not n
                )
            due = time.monotonic() - INDEX_KEEP_SECONDS
            stale = [
                pair
                for pair, used in self._indexed.items()
                if used < due and pair not in self._dirty and not self._claiming.get(pair)
            ]
            if stale:
                await self.redis.srem(self.index, *(pair_member(pair) for pair in stale))
                for pair in stale:
                    del self._indexed[pair]
            return len(stale)

    async def indexed(self, worker_id: str) -> list[Pair]:
        """The pairs in a worker's index (orphan recovery walks a dead worker's)."""
        members = await self.redis.smembers(keys.processing_index(worker_id))
        return [pair_from_member(str(member)) for member in members]

    async def ready(self, pair: Pair) -> bool:
        """Utterances wait, no turn runs and no event waits (an idle pair leaves the
        active set here)."""
        result = int(
            await self._ready(
                keys=[keys.prompt_queue(pair), keys.event_queue(pair), keys.turn_marker(pair)],
                args=[],
            )
        )
        if result < 0:
            await self._leave_active(pair)
        return result > 0

    async def _leave_active(self, pair: Pair) -> None:
        """Take an idle pair off the active set — then look again, since work may have
        come between the script and the removal (its SADD went before it, so it may have
        been the one removed): a pair that has work again goes back in."""
        member = pair_member(pair)
        await self.redis.srem(keys.active_pairs(), member)
        again = int(
            await self._ready(
                keys=[keys.prompt_queue(pair), keys.event_queue(pair), keys.turn_marker(pair)],
                args=[],
            )
        )
        if again >= 0:
            await self.redis.sadd(keys.active_pairs(), member)

    async def begin_turn(self, pair: Pair, turn_id: str) -> Claimed | None:
        """Take the marker and cut the front block, if no turn runs and no event waits."""
        async with self.claiming(pair) as claim:
            raw = await self._begin(
                keys=[
                    keys.prompt_queue(pair),
                    keys.event_queue(pair),
                    keys.turn_marker(pair),
                    self.processing(pair),
                    keys.carried_ids(pair),
                    keys.carried_rounds(pair),
                ],
                args=[
                    turn_id,
                    keys.TURN_MARKER_TTL,
                    pair_member(pair),
                    INTAKE_WINDOW_SECONDS,
                    MAX_BLOCK,
                    pair.user_id,
                    pair.character_id,
                ],
            )
            claim.moved = bool(raw) and not isinstance(raw, int)
        if isinstance(raw, int):
            if raw < 0:
                await self._leave_active(pair)
            return None
        return Claimed.parse(raw) if raw else None

    async def claim_event(self, pair: Pair) -> Claimed | None:
        """Move the next runnable event of the pair into this worker's processing list."""
        async with self.claiming(pair) as claim:
            raw = await self._claim(
                keys=[keys.event_queue(pair), self.processing(pair), keys.turn_marker(pair)],
                args=[self.worker_id, keys.TURN_MARKER_TTL, MAX_EVENT_SCAN],
            )
            claim.moved = bool(raw)
        return Claimed.parse(raw) if raw else None

    async def supersede(
        self,
        pair: Pair,
        entry: Claimed,
        last_received_at: float,
        message_ids: list[str],
        stage: WireMessage,
        rounds: int = 1,
    ) -> Supersede:
        """Abandon the claimed user event `entry` if the user wrote on: the oldest queued
        utterance arrived at most the block window after `last_received_at`, and no agent
        question is open (the next utterance would be its answer). Atomically: carry
        `message_ids` over to the next block, delete the marker, drop the entry and
        deliver `stage` — so the client hears of it before anything of the next turn.
        False otherwise. Either way a marker this run still owns has its TTL refreshed
        (the run moved on), so a caller asking after every node needs no
        `refresh_marker` of its own. `rounds`: runs in a row superseded with this one
        (the next block takes the number over, `Claimed.carried_rounds`). Retried
        through a Redis outage; `Supersede.GONE` if the entry had left the list."""
        script_keys = [
            keys.prompt_queue(pair),
            keys.turn_marker(pair),
            self.processing(pair),
            keys.carried_ids(pair),
            keys.pending_agent(pair.user_id),
            *delivery_keys(pair.user_id),
            keys.carried_rounds(pair),
        ]
        body = wire_body(stage)  # once: a retry must send the same body (held_delivery)
        held = self._held

        def args(hold: str) -> list[Any]:
            return [
                entry.marker,
                entry.raw,
                repr(last_received_at),
                INTAKE_WINDOW_SECONDS,
                keys.QUEUE_TTL,
                body,
                LOG_KEEP,
                LOG_MAX_AGE,
                keys.TURN_MARKER_TTL,
                rounds,
                hold,
                *message_ids,
            ]

        if held is None:
            done = await until_redis_back(
                lambda: self._supersede(keys=script_keys, args=args("")),
                f"supersede check of {pair}",
            )
        else:
            channel = keys.delivery_channel(pair.user_id)
            done = await until_redis_back(
                lambda: held.run(HELD_SUPERSEDE, script_keys, args(HOLD), channel),
                f"supersede check of {pair}",
            )
        found = Supersede(int(done))
        if found is Supersede.SUPERSEDED:  # the next block may start now
            await wake(self.redis, pair)
        return found

    async def refresh_marker(self, pair: Pair, value: str) -> bool:
        """Extend the marker's TTL while its turn makes progress (after every node): the
        TTL brakes a turn that stopped moving, not a long one that still moves."""
        refreshed = await until_redis_back(
            lambda: self._refresh(
                keys=[keys.turn_marker(pair)], args=[value, keys.TURN_MARKER_TTL]
            ),
            f"marker refresh of {pair}",
        )
        return bool(refreshed)

    async def finish(
        self, pair: Pair, entry: Claimed, *, release_marker: bool = True, push: Event | None = None
    ) -> bool:
        """Atomically: drop the entry from the processing list and, only if it was still
        there, optionally release the marker it holds and push an event. Retried through a
        Redis outage; False if the entry had already left the list (nothing done). The
        pair goes on the ready list afterwards (a pushed event makes it active before)."""
        args: list[str | int] = [
            entry.marker if release_marker else "",
            entry.raw,
            push.wire() if push is not None else "",
            keys.QUEUE_TTL,
        ]
        if push is not None:
            await until_redis_back(lambda: self._enter_active(pair), f"activating {pair}")
        done = await until_redis_back(
            lambda: self._finish(keys=self._end_keys(pair), args=args),
            f"finish of a {entry.kind} of {pair}",
        )
        if done:
            await wake(self.redis, pair)
        return bool(done)

    async def hand_back(self, pair: Pair, entry: Claimed) -> bool:
        """Put a claimed event that never ran back at the front of its queue and free the
        marker it holds (its claim's reply was lost, so no task ever ran it)."""
        args: list[str | int] = [
            entry.marker,
            entry.raw,
            str(entry.data.get("raw", "")),
            keys.QUEUE_TTL,
        ]
        await until_redis_back(lambda: self._enter_active(pair), f"activating {pair}")
        done = await until_redis_back(
            lambda: self._hand_back(keys=self._end_keys(pair), args=args),
            f"hand-back of an event of {pair}",
        )
        if done:
            await wake(self.redis, pair)
        return bool(done)

    async def _enter_active(self, pair: Pair) -> None:
        await self.redis.sadd(keys.active_pairs(), pair_member(pair))

    async def entries(self) -> list[tuple[Pair, Claimed]]:
        """What this worker's processing lists hold now, with the pair of each list (only
        dirty lists are read: the others hold nothing of this process)."""
        pairs = list(self._dirty)
        if not pairs:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for pair in pairs:
                pipe.lrange(self.processing(pair), 0, -1)
            lists = await pipe.execute()
        return [
            (pair, Claimed.parse(str(raw)))
            for pair, found in zip(pairs, lists, strict=True)
            for raw in found
        ]

    def _end_keys(self, pair: Pair) -> list[str]:
        return [keys.turn_marker(pair), self.processing(pair), keys.event_queue(pair)]


async def wake(redis: aioredis.Redis, pair: Pair) -> None:
    """Put `pair` on the ready list after a step outside the queue scripts freed it. Not
    atomic with that step: lost in a crash between the two, the pair is found by the
    workers' slow sweep (`events/ready.py`)."""
    try:
        await redis.rpush(keys.ready_pairs(), pair_member(pair))
    except Exception as exc:
        log.warning("could not put %s on the ready list (%s); the sweep finds it", pair, exc)


async def push_event(redis: aioredis.Redis, event: Event) -> None:
    """Enqueue an event (e.g. a Pixie impulse) so the event consumer finds it."""
    pair = Pair(event.user_id, event.character_id)
    queue = keys.event_queue(pair)
    member = pair_member(pair)
    # Three slots' worth of steps in order: active before the event exists, the hint after.
    await redis.sadd(keys.active_pairs(), member)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.rpush(queue, event.wire())
        pipe.expire(queue, keys.QUEUE_TTL)
        await pipe.execute()
    await redis.rpush(keys.ready_pairs(), member)
