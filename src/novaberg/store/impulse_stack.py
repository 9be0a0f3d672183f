"""The impulse stack `shadow_stack:{u}:{c}`: what Nova might say on her own to one pair
(docs/behaviour/pixie.md#impulse-stack).

A Redis hash, entry id → JSON `{id, aufgabe, thema, inhalt, grund, erstellt, embedding,
intentionen, emotion, modus, salienz, arousal, ausloeser_turn_id}`. Jobs push entries;
only delivery takes them off, and only after the impulse event was queued (then the entry
and every entry with cosine ≥ 0.60 to it leave together); a person may dismiss one.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final

import redis.asyncio as aioredis

from novaberg.store import keys
from novaberg.store.keys import Pair

NEAR_DUPLICATE: Final = 0.60
"""Entries this similar to a delivered one leave the stack with it."""


@dataclass(frozen=True)
class StackEntry:
    """One thing Nova might say. `arousal` is validated on creation, never clamped."""

    aufgabe: str
    thema: str
    inhalt: str
    embedding: list[float]
    grund: str = ""
    erstellt: float = 0.0
    intentionen: list[str] = field(default_factory=list)
    emotion: str | None = None
    modus: str | None = None
    salienz: float | None = None
    arousal: float | None = None
    ausloeser_turn_id: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])

    def __post_init__(self) -> None:
        if not self.inhalt.strip():
            raise ValueError("a stack entry needs a text")
        if self.arousal is not None and (
            isinstance(self.arousal, bool)
            or not isinstance(self.arousal, int | float)
            or not 0.0 <= float(self.arousal) <= 1.0
        ):
            raise ValueError(f"arousal {self.arousal!r} is not a number in [0, 1]")

    def wire(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def parse(cls, raw: str | bytes) -> StackEntry:
        data = json.loads(raw)
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    def public(self) -> dict[str, Any]:
        """What `GET /impulses` shows (no embedding)."""
        return {k: v for k, v in asdict(self).items() if k != "embedding"}


def cosine(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cosine similarity, or None when either vector is empty, zero or of another size."""
    if not a or not b or len(a) != len(b):
        return None
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0 or nb == 0:
        return None
    return dot / (na * nb)


def embed_text(topic: str, text: str) -> str:
    """The text an entry's embedding is made of."""
    return f"{topic} {text[:200]}".strip()


async def push(redis: aioredis.Redis, pair: Pair, entry: StackEntry) -> str:
    async with redis.pipeline(transaction=True) as pipe:
        pipe.hset(keys.impulse_stack(pair), entry.id, entry.wire())
        pipe.sadd(keys.impulse_stack_pairs(), str(pair))
        await pipe.execute()
    return entry.id


async def entries(redis: aioredis.Redis, pair: Pair) -> list[StackEntry]:
    """The pair's entries, oldest first; an unreadable entry is skipped."""
    raw = await redis.hgetall(keys.impulse_stack(pair))
    found = []
    for value in raw.values():
        try:
            found.append(StackEntry.parse(value))
        except (ValueError, TypeError):
            continue
    found.sort(key=lambda e: (e.erstellt, e.id))
    return found


async def remove(redis: aioredis.Redis, pair: Pair, ids: Sequence[str]) -> int:
    if not ids:
        return 0
    return int(await redis.hdel(keys.impulse_stack(pair), *ids))


def near_duplicates(entry: StackEntry, others: Sequence[StackEntry]) -> list[str]:
    """Ids of `others` with cosine ≥ 0.60 to `entry` (the entry itself included)."""
    ids = [entry.id]
    for other in others:
        if other.id == entry.id:
            continue
        similarity = cosine(entry.embedding, other.embedding)
        if similarity is not None and similarity >= NEAR_DUPLICATE:
            ids.append(other.id)
    return ids


async def pairs(redis: aioredis.Redis) -> list[Pair]:
    """Pairs whose stack may hold entries (emptied ones are dropped from the set)."""
    found = []
    for member in await redis.smembers(keys.impulse_stack_pairs()):
        user_id, _, character_id = str(member).partition(":")
        if user_id and character_id:
            found.append(Pair(user_id, character_id))
    return sorted(found, key=str)


async def size(redis: aioredis.Redis, pair: Pair) -> int:
    return int(await redis.hlen(keys.impulse_stack(pair)))
