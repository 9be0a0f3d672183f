"""Helpers for the impulse tests: a controllable clock and a primed pair."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import redis.asyncio as aioredis

from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.stack import StackEntry
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.session import append_turn

PAIR = Pair("anna", "nova")
BERLIN = ZoneInfo("Europe/Berlin")
DIM = 384


@dataclass
class Clock:
    """Epoch seconds that a test moves by hand."""

    now: float

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def at(text: str) -> float:
    """'2026-12-03 21:00' in Berlin as epoch seconds."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=BERLIN).timestamp()


def direction(index: int, mix: float = 0.0, other: int = 1) -> list[float]:
    """A unit vector mostly along axis `index`, tilted by `mix` toward axis `other`."""
    vector = [0.0] * DIM
    vector[index] = math.cos(mix)
    vector[other] += math.sin(mix)
    return vector


async def user_turn(
    redis: aioredis.Redis,
    now: float,
    *,
    emotion: str = "traurigkeit",
    vector: str = "absturz",
    mode: str = "emotional",
    embedding: list[float] | None = None,
    text: str = "Mir geht es heute richtig schlecht.",
) -> None:
    """What the dispatcher stores for a user's utterance, and the prompt consumer's mark."""
    await append_turn(
        redis,
        PAIR,
        {
            "rolle": "user",
            "inhalt": text,
            "zeit": now,
            "emotion": emotion,
            "arousal": 0.7,
            "modus": mode,
            "emotions_vektor": vector,
            "embedding": embedding or direction(0),
        },
    )
    await redis.set(keys.last_activity(PAIR.user_id), now)
    await redis.delete(keys.impulse_burst(PAIR))


async def stance(
    redis: aioredis.Redis, now: float, closeness: float = 0.5, initiative: str = "1"
) -> None:
    await redis.hset(
        keys.stance(PAIR),
        mapping={"gerechnet": "1", "naehe": closeness, "initiative": initiative, "zeit": now},
    )


async def present(redis: aioredis.Redis) -> None:
    await redis.set(keys.presence(PAIR.user_id), "1")


async def entry(
    redis: aioredis.Redis,
    now: float,
    *,
    task: str = "nachfragen",
    embedding: list[float] | None = None,
    text: str = "Ich möchte nachfragen, wie es mit dem Streit geht.",
    arousal: float | None = 0.4,
    trigger: str | None = "t-ausloeser",
    mode: str | None = "emotional",
) -> StackEntry:
    item = StackEntry(
        aufgabe=task,
        thema="Streit",
        inhalt=text,
        embedding=embedding or direction(0),
        erstellt=now,
        modus=mode,
        arousal=arousal,
        ausloeser_turn_id=trigger,
    )
    await impulse_stack.push(redis, PAIR, item)
    return item


async def prime(
    redis: aioredis.Redis, now: float, *, connected: bool = True, **turn: Any
) -> StackEntry:
    """A sad utterance a minute ago, a warm stance, a connected user (unless `connected`
    is false: no page open), one follow-up entry."""
    await user_turn(redis, now - 60, **turn)
    await stance(redis, now)
    if connected:
        await present(redis)
    return await entry(redis, now)
