"""Events held while a person has paused the character (docs/behaviour/events.md#paused-characters).

A message to a paused character is accepted and runs Path 1 as always (the session turn and
the short-term memory are stored); its event is not run but held in
`geparkte_ereignisse:{u}:{c}` — not left in the event queue, where it would keep the pair's
input closed (the prompt consumer starts no turn while an event waits), so every further
message is perceived and stored too. When the character is activated the held events go back
to the front of the event queue, the person's messages folded into one event the way a block
is (one answer naming all their ids, carried in order); an event held longer than the hold
time is ended with `turn_gescheitert` (`charakter_pausiert`).

Exactly one outcome per id: each step below is one script that moves an event between two
durable places — the processing list of the worker that claimed it, the held list, the event
queue, and (to end one whose hold ran out) the processing list again — so a worker dying
between two steps leaves the event in one of them, to be recovered or taken up from there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import redis.asyncio as aioredis

from novaberg.events import parked_lua as lua
from novaberg.events.intake import pair_from_member, pair_member
from novaberg.events.model import Event, EventRejected, build_event, parse_event
from novaberg.events.queues import Claimed, TurnQueues, wake
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.human_tail import peek_tail
from novaberg.store.retry import until_redis_back
from novaberg.store.scripts import script
from novaberg.wire import (
    FIELD_HUMAN_SALIENCE,
    FIELD_MESSAGE_IDS,
    FIELD_PATH1_FAILURE,
    FIELD_PATH1_TAIL,
    FIELD_RECEIVED_AT,
    FIELD_USER_INTENTIONS,
    FIELD_USER_PROMPT,
    KIND_MESSAGE,
    SOURCE_USER,
)

TAKE_UP_TRIES: Final = 20
"""Reads of the held list before a take-up gives up for now (each retry means another worker
changed the list meanwhile; the workers' sweep takes up what is left)."""


@dataclass(frozen=True, slots=True)
class TakenUp:
    """What an activation queued again: events, and the person's messages among them."""

    events: int = 0
    messages: int = 0


class ParkedEvents:
    """The held-event scripts, bound to one Redis client and one worker's processing lists."""

    def __init__(self, redis: aioredis.Redis, queues: TurnQueues, hold_seconds: float) -> None:
        self.redis = redis
        self.queues = queues
        self.hold_seconds = hold_seconds
        self._park = script(redis, lua.PARK)
        self._unpark_one = script(redis, lua.UNPARK_ONE)

    async def park(self, pair: Pair, entry: Claimed) -> bool:
        """Move the claimed event `entry` from the processing list to the held list and
        free the turn marker it holds; False if the entry had already left the list."""
        args: list[str | int] = [
            entry.raw,
            entry.marker,
            str(entry.data.get("raw", "")),
            int(self.hold_seconds) + keys.QUEUE_TTL,
        ]
        # Paused before the event is held (another slot): an extra member is harmless.
        await until_redis_back(
            lambda: self.redis.sadd(keys.paused_pairs(), pair_member(pair)), f"pausing {pair}"
        )
        done = await until_redis_back(
            lambda: self._park(
                keys=[
                    self.queues.processing(pair),
                    keys.turn_marker(pair),
                    keys.parked_events(pair),
                ],
                args=args,
            ),
            f"holding an event of {pair}",
        )
        if done:  # its marker is free: what waits behind it may start
            await wake(self.redis, pair)
        return bool(done)

    async def held(self, pair: Pair) -> list[str]:
        """The pair's held events as stored, oldest first."""
        return [str(raw) for raw in await self.redis.lrange(keys.parked_events(pair), 0, -1)]

    async def pairs(self) -> list[Pair]:
        """Pairs that may hold events."""
        return [pair_from_member(str(m)) for m in await self.redis.smembers(keys.paused_pairs())]

    def due(self, raws: list[str], now: float) -> list[str]:
        """The held events (of `raws`, oldest first) whose hold time ran out."""
        found = []
        for raw in raws:
            try:
                created = parse_event(raw).created_at
            except EventRejected:
                created = 0.0  # an unreadable event is ended at once
            if now - created < self.hold_seconds:
                break
            found.append(raw)
        return found

    async def unpark_one(self, pair: Pair, raw: str) -> Claimed | None:
        """Move one held event into the processing list (to end it there); None if another
        worker took it first."""
        entry = Claimed.parse(_processing_entry(raw))
        async with self.queues.claiming(pair) as claim:
            moved = await self._unpark_one(
                keys=[keys.parked_events(pair), self.queues.processing(pair)],
                args=[raw, entry.raw],
            )
            claim.moved = bool(moved)
        if moved:
            await leave_paused(self.redis, pair)
        return entry if moved else None


async def leave_paused(redis: aioredis.Redis, pair: Pair) -> None:
    """Take a pair whose held list is empty off the paused set, then look again (an event
    may have been held meanwhile, its SADD before ours): one that holds events goes back."""
    if await redis.llen(keys.parked_events(pair)):
        return
    member = pair_member(pair)
    await redis.srem(keys.paused_pairs(), member)
    if await redis.llen(keys.parked_events(pair)):
        await redis.sadd(keys.paused_pairs(), member)


async def take_up(redis: aioredis.Redis, pair: Pair, now: float) -> TakenUp:
    """Queue the pair's held events again, at the front of its event queue and in order,
    the person's messages folded into one event (`take_up_plan`). With nothing held it only
    drops the pair from the paused set."""
    run = script(redis, lua.TAKE_UP)
    for _ in range(TAKE_UP_TRIES):
        raws = [str(raw) for raw in await redis.lrange(keys.parked_events(pair), 0, -1)]
        tails = {
            event.turn_id: await peek_tail(redis, event.turn_id)
            for event in _user_messages(raws)
            if event.payload.get(FIELD_PATH1_TAIL)
        }
        queued, dropped_tails = take_up_plan(raws, tails, now)
        if queued:  # active before the events are queued (another slot)
            await redis.sadd(keys.active_pairs(), pair_member(pair))
        count = await run(
            keys=[keys.parked_events(pair), keys.event_queue(pair)],
            args=[len(raws), *raws, keys.QUEUE_TTL, pair_member(pair), *queued],
        )
        if int(count) >= 0:
            await leave_paused(redis, pair)
            if dropped_tails:  # one key each: the tails are keys of turns, not of the pair
                async with redis.pipeline(transaction=False) as pipe:
                    for turn_id in dropped_tails:
                        pipe.delete(keys.human_tail(turn_id))
                    await pipe.execute()
        if int(count) > 0:
            await wake(redis, pair)
        if int(count) >= 0:
            messages = sum(len(e.message_ids) for e in _user_messages(queued))
            return TakenUp(events=int(count), messages=messages)
    return TakenUp()


def _processing_entry(raw: str) -> str:
    """A processing-list entry for a held event (it holds no turn marker)."""
    return json.dumps({"art": "event", "raw": raw, "marker": ""}, ensure_ascii=False)


def take_up_plan(
    raws: list[str], tails: Mapping[str, dict[str, Any] | None], now: float
) -> tuple[list[str], list[str]]:
    """What an activation queues, in order, and which Path 1 tail keys it drops.

    The person's messages become one event, at the place of the last of them — like a block
    of quick messages: one answer names every id, in order, its text is their texts joined
    by newlines, and the perception is the last one's (it saw the latest state). Events the
    character started (impulses, continues) keep their places. The folded event's salience
    results (`pfad1_nachlauf`) are put into its payload when they are published, dropped
    (`salienz_human` stays null) when they can no longer come, and left to the run to wait
    for otherwise; the earlier messages' results are not needed any more."""
    parsed = [_parsed(raw) for raw in raws]
    users = [i for i, event in enumerate(parsed) if event is not None and _is_user(event)]
    if not users:
        return list(raws), []
    messages = [parsed[i] for i in users]
    folded, dropped = _fold([e for e in messages if e is not None], tails, now)
    queued = [
        folded if i == users[-1] else raw for i, raw in enumerate(raws) if i not in users[:-1]
    ]
    return queued, dropped


def _fold(
    users: list[Event], tails: Mapping[str, dict[str, Any] | None], now: float
) -> tuple[str, list[str]]:
    """The person's held messages as one event (see `take_up_plan`), and the tails dropped."""
    last = users[-1]
    payload = dict(last.payload)
    dropped = [e.turn_id for e in users[:-1] if e.payload.get(FIELD_PATH1_TAIL)]
    if len(users) > 1:
        payload[FIELD_MESSAGE_IDS] = list(dict.fromkeys(i for e in users for i in e.message_ids))
        payload[FIELD_USER_PROMPT] = "\n".join(
            str(e.payload[FIELD_USER_PROMPT]) for e in users if e.payload.get(FIELD_USER_PROMPT)
        )
        first_received = users[0].payload.get(FIELD_RECEIVED_AT)
        if first_received is not None:
            payload[FIELD_RECEIVED_AT] = first_received
        failures = [
            e.payload[FIELD_PATH1_FAILURE] for e in users if e.payload.get(FIELD_PATH1_FAILURE)
        ]
        if failures:  # some words may be missing from the session: the run must not be superseded
            payload.setdefault(FIELD_PATH1_FAILURE, failures[0])
    if payload.get(FIELD_PATH1_TAIL):
        tail = tails.get(last.turn_id)
        if tail is not None:
            payload.pop(FIELD_PATH1_TAIL)
            payload[FIELD_HUMAN_SALIENCE] = tail.get(FIELD_HUMAN_SALIENCE)
            payload[FIELD_USER_INTENTIONS] = list(tail.get(FIELD_USER_INTENTIONS) or [])
            dropped.append(last.turn_id)
        elif now - last.created_at >= keys.HUMAN_TAIL_TTL:
            payload.pop(FIELD_PATH1_TAIL)  # expired unread: nothing can come any more
            payload[FIELD_HUMAN_SALIENCE] = None
            payload[FIELD_USER_INTENTIONS] = []
    folded = build_event(**{**last.model_dump(by_alias=True), "payload": payload})
    return folded.wire(), dropped


def _parsed(raw: str) -> Event | None:
    try:
        return parse_event(raw)
    except EventRejected:
        return None


def _is_user(event: Event) -> bool:
    return event.source == SOURCE_USER and event.kind == KIND_MESSAGE


def _user_messages(raws: list[str]) -> list[Event]:
    return [event for event in map(_parsed, raws) if event is not None and _is_user(event)]
