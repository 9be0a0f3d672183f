"""The impulse stack `shadow_stack:{u}:{c}`: what Nova might say on her own to one pair
(docs/behaviour/pixie.md#impulse-stack).

A Redis hash, entry id → JSON `{id, aufgabe, thema, inhalt, grund, erstellt, embedding,
intentionen, emotion, modus, salienz, arousal, ausloeser_turn_id}`. Jobs push entries;
only delivery takes them off, and only after the impulse event was queued (then the entry
and every entry with cosine ≥ 0.60 to it leave together); a person may dismiss one.

A delivery that fails (the AgentGraph or the queueing raised) is counted per entry in
`shadow_stack_fehler:{u}:{c}`; the entry waits 30 s, then 120 s before the next try, and
the third failure parks it: it moves to `shadow_stack_geparkt:{u}:{c}` with the reason,
where delivery never looks, `GET /impulses` and `novaberg pixie status` show it, and a
person may dismiss it.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final

import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import keys

NEAR_DUPLICATE: Final = 0.60
"""Entries this similar to a delivered one leave the stack with it."""

MAX_DELIVERY_ATTEMPTS: Final = 3
"""Failed deliveries after which an entry is parked."""

RETRY_BACKOFF: Final = (30.0, 120.0)
"""Seconds an entry waits after its first and second failed delivery."""


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
    # The set of pairs is global (another hash slot than the pair's stack): the pair joins
    # it before the entry exists; whoever drops an empty pair looks again afterwards.
    await redis.sadd(keys.impulse_stack_pairs(), str(pair))
    await redis.hset(keys.impulse_stack(pair), entry.id, entry.wire())
    return entry.id


async def entries(redis: aioredis.Redis, pair: Pair) -> list[StackEntry]:
    """The pair's entries, oldest first; an unreadable entry is skipped."""
    return parse_entries((await redis.hgetall(keys.impulse_stack(pair))).values())


def parse_entries(values: Iterable[str | bytes]) -> list[StackEntry]:
    """The stack hash's values as entries, oldest first; an unreadable one is skipped (for a
    caller that read the hash in a batch of its own)."""
    found = []
    for value in values:
        try:
            found.append(StackEntry.parse(value))
        except (ValueError, TypeError):
            continue
    found.sort(key=lambda e: (e.erstellt, e.id))
    return found


async def remove(redis: aioredis.Redis, pair: Pair, ids: Sequence[str]) -> int:
    """Take entries off the stack (their failure counts go with them)."""
    if not ids:
        return 0
    async with redis.pipeline(transaction=True) as pipe:
        pipe.hdel(keys.impulse_stack(pair), *ids)
        pipe.hdel(keys.impulse_failures(pair), *ids)
        removed, _ = await pipe.execute()
    return int(removed)


@dataclass(frozen=True)
class Failure:
    """Failed deliveries of one entry so far; it may be tried again at `naechster_versuch`."""

    versuche: int
    grund: str
    naechster_versuch: float

    def wire(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


async def failures(redis: aioredis.Redis, pair: Pair) -> dict[str, Failure]:
    """Entry id → its failures (unreadable records are skipped)."""
    found: dict[str, Failure] = {}
    for entry_id, raw in (await redis.hgetall(keys.impulse_failures(pair))).items():
        try:
            found[str(entry_id)] = Failure(**json.loads(raw))
        except (ValueError, TypeError):
            continue
    return found


def waiting(stack: Sequence[StackEntry], failed: dict[str, Failure], now: float) -> set[str]:
    """Ids of entries still in their backoff after a failed delivery (pure)."""
    return {e.id for e in stack if e.id in failed and failed[e.id].naechster_versuch > now}


async def record_failure(
    redis: aioredis.Redis, pair: Pair, entry: StackEntry, reason: str, now: float
) -> Failure:
    """Count a failed delivery of `entry`: back off, or park it at the third failure.
    Callers hold the pair's delivery lease, so the read-modify-write does not race."""
    earlier = (await failures(redis, pair)).get(entry.id)
    attempts = (earlier.versuche if earlier else 0) + 1
    if attempts >= MAX_DELIVERY_ATTEMPTS:
        failure = Failure(attempts, reason[:300], 0.0)
        parked = {**asdict(entry), "versuche": attempts, "grund_geparkt": reason[:300],
                  "geparkt_am": now}  # fmt: skip
        await redis.sadd(keys.impulse_parked_pairs(), str(pair))  # global: before, not inside
        async with redis.pipeline(transaction=True) as pipe:
            pipe.hset(keys.impulse_parked(pair), entry.id, json.dumps(parked, ensure_ascii=False))
            pipe.hdel(keys.impulse_stack(pair), entry.id)
            pipe.hdel(keys.impulse_failures(pair), entry.id)
            await pipe.execute()
        return failure
    failure = Failure(attempts, reason[:300], now + RETRY_BACKOFF[attempts - 1])
    await redis.hset(keys.impulse_failures(pair), entry.id, failure.wire())
    return failure


async def parked(redis: aioredis.Redis, pair: Pair) -> list[dict[str, Any]]:
    """The pair's parked entries (without embeddings), oldest first."""
    found = []
    for raw in (await redis.hgetall(keys.impulse_parked(pair))).values():
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        item.pop("embedding", None)
        found.append(item)
    found.sort(key=lambda item: (item.get("geparkt_am") or 0, item.get("id") or ""))
    return found


async def parked_pairs(redis: aioredis.Redis) -> list[Pair]:
    found = []
    for member in await redis.smembers(keys.impulse_parked_pairs()):
        user_id, _, character_id = str(member).partition(":")
        if user_id and character_id:
            found.append(Pair(user_id, character_id))
    return sorted(found, key=str)


async def dismiss_parked(redis: aioredis.Redis, pair: Pair, entry_id: str) -> bool:
    return int(await redis.hdel(keys.impulse_parked(pair), entry_id)) == 1


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
