"""Short-term memory (KZG) storage in Redis: entry hashes, a per-pair index, brute-force search.

One entry is the hash `kzg:{u}:{c}:{epoch_ms}` (docs/behaviour/memory.md#short-term-memory;
field names are stored data) with its embedding as little-endian float32 bytes. The
embedded Valkey has no RediSearch, so a set `kzg_index:{u}:{c}` lists a pair's keys and
search is an exact cosine over the pair's vectors with numpy. Entries expire by TTL only;
the index is pruned lazily whenever a listed key turns out to be gone.

Vectors are cached per process; the cache is only a shortcut for fetching, every hit is
re-read from Redis, in the same script call that checks the cache is still current. An
embedding changes only when the person corrects an entry (`correct`), which bumps a per-pair
counter that makes every process refetch the pair's vectors.

Every Redis round trip costs this CPU-bound process noticeable client time, so the usual
paths are one script call each: a search, a create (with the profile flag, the
neighbours' frequency bump, matched on the writer-normalised `themen_norm`, and the entity
magnets' read of the pair's entries), a promotion mark.

This module stores what it is given: no model calls and no salience rules (those live in
`novaberg.memory.short_term` and `novaberg.memory.curve`). Its Lua scripts are in
`short_term_lua.py`, the entry format in `short_term_codec.py` (the hash fields under English
names in `short_term_fields.py`), the search half in `short_term_search.py`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import redis.asyncio as aioredis
from redis.client import NEVER_DECODE

from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store import short_term_lua as lua
from novaberg.store.scripts import script
from novaberg.store.short_term_codec import (
    DTYPE,
    FIELD_EMBEDDING,
    FIELD_PROMOTION,
    ShortTermEntry,
    ThemeRow,
    as_mapping,
    decode_hash,
    encode_vector,
    flat_fields,
    key_ms,
    theme_tokens,
)
from novaberg.store.short_term_search import PairCache, ShortTermSearch

__all__ = ["INDEX_TTL", "CreatedEntry", "FieldRow", "ShortTermStore"]

INDEX_TTL: Final = 30 * 86_400
"""The index outlives its longest entry tier (30 d) and is refreshed on
every write, so an abandoned pair's index disappears on its own."""


FieldRow = tuple[str, list[str | None]]
"""(entry key, the values of the asked fields; None where the entry lacks one)."""


@dataclass(frozen=True, slots=True)
class CreatedEntry:
    """What one create script call returns: the new key, the theme neighbours it
    incremented and the legacy ones left to the caller (`match_themes`), and the asked
    `field_rows` of the pair (the new entry included)."""

    key: str
    matched: list[ThemeRow]
    legacy: list[ThemeRow]
    rows: list[FieldRow]


class ShortTermStore(ShortTermSearch):
    """Redis access for short-term memory entries of every pair (search: `ShortTermSearch`)."""

    def __init__(self, redis: aioredis.Redis, *, cache_vectors: bool = True) -> None:
        self.redis = redis
        self.cache_vectors = cache_vectors
        self._vectors: dict[str, np.ndarray] = {}
        self._pairs: OrderedDict[Pair, PairCache] = OrderedDict()
        self._create = script(redis, lua.CREATE)
        self._forget = script(redis, lua.FORGET)
        self._forget_one = script(redis, lua.FORGET_ONE)
        self._correct = script(redis, lua.CORRECT)
        self._members = script(redis, lua.MEMBERS)
        self._field_rows = script(redis, lua.FIELD_ROWS)
        self._vectors_script = script(redis, lua.VECTORS)
        self._pair_vectors = script(redis, lua.PAIR_VECTORS)
        self._hits = script(redis, lua.HITS)
        self._match_themes = script(redis, lua.MATCH_THEMES)
        self._resalience = script(redis, lua.RESALIENCE)
        self._increment = script(redis, lua.INCREMENT)
        self._mark = script(redis, lua.MARK_PROMOTION)
        self._queue_promotion = script(redis, lua.QUEUE_PROMOTION)

    # --- writing -------------------------------------------------------------------

    async def create(
        self,
        pair: Pair,
        fields: Mapping[str, Any],
        vector: Sequence[float] | np.ndarray,
        *,
        ttl_seconds: int,
        epoch_ms: int,
        flag: str | None = None,
    ) -> str:
        """Store a new entry under the first free `kzg:{u}:{c}:{ms}` at or after `epoch_ms`.

        Two entries of one turn can share a millisecond; the create script refuses an
        existing key atomically and the next millisecond is tried. `flag` (e.g. the pair's
        profile_dirty key) is set to "1" by the same script call, saving a round trip.
        """
        created = await self._create_entry(pair, fields, vector, ttl_seconds, epoch_ms, flag, None)
        return created.key

    async def create_matching(
        self,
        pair: Pair,
        fields: Mapping[str, Any],
        vector: Sequence[float] | np.ndarray,
        *,
        ttl_seconds: int,
        epoch_ms: int,
        themes: Iterable[str] | None,
        flag: str | None = None,
        rows_of: Sequence[str] = (),
    ) -> CreatedEntry:
        """`create`, then `match_themes(pair, new key, themes)` and `field_rows(pair,
        rows_of)` in the same script call (one round trip where a write needs all three).
        `themes=None` skips the matching, empty `rows_of` the rows."""
        return await self._create_entry(
            pair, fields, vector, ttl_seconds, epoch_ms, flag, themes, rows_of
        )

    async def _create_entry(
        self,
        pair: Pair,
        fields: Mapping[str, Any],
        vector: Sequence[float] | np.ndarray,
        ttl_seconds: int,
        epoch_ms: int,
        flag: str | None,
        themes: Iterable[str] | None,
        rows_of: Sequence[str] = (),
    ) -> CreatedEntry:
        row = np.asarray(vector, dtype=DTYPE)  # once: the stored bytes and the cached row
        payload = flat_fields({**fields, FIELD_EMBEDDING: row.tobytes()})
        index = keys.short_term_index(pair)
        version = keys.short_term_index_version(pair)
        script_keys = [index, version] if flag is None else [index, version, flag]
        tokens = [] if themes is None else theme_tokens(themes)
        count = -1 if themes is None else len(tokens)
        names = list(rows_of)
        args = [int(ttl_seconds * 1000), INDEX_TTL, count, len(names), *tokens, *names, *payload]
        for offset in range(1000):
            key = keys.short_term_entry(pair, epoch_ms + offset)
            reply = await self._create(keys=[key, *script_keys], args=args)
            created = int(reply[0])
            if created >= 1:
                self._write_through(pair, key, row, created)
                matched, legacy = self._theme_rows(reply[1], reply[2])
                rows = _field_rows(reply[3], len(names)) if names else []
                return CreatedEntry(key, matched, legacy, rows)
        raise RuntimeError(f"no free short-term key for {pair} near {epoch_ms}")

    def _write_through(self, pair: Pair, key: str, row: np.ndarray, version: int) -> None:
        """Add our own new entry (its vector as stored) to the cached matrix when it is the
        only change since the cache was built (version n-1 → n), so the next search needs no
        refetch."""
        cached = self._pairs.get(pair)
        if not self.cache_vectors or cached is None or cached.version != str(version - 1):
            return
        norm = float(np.linalg.norm(row))
        if row.ndim != 1 or row.shape[0] != cached.matrix.shape[1] or norm == 0.0:
            return
        self._vectors[key] = row
        cached.append(key, row / norm)
        cached.version = str(version)

    async def increment_frequency(self, key: str) -> int | None:
        """haeufigkeit + 1; None when the entry has expired meanwhile."""
        return (await self.increment_frequencies([key]))[0]

    async def increment_frequencies(self, entry_keys: Sequence[str]) -> list[int | None]:
        """`increment_frequency` for many entries in one script call (same order)."""
        if not entry_keys:
            return []
        result = await self._increment(keys=list(entry_keys))
        return [None if int(r) < 0 else int(r) for r in result]

    async def set_salience(
        self, pair: Pair, key: str, salience: float, *, tier_seconds: int
    ) -> int | None:
        """Store a recomputed salience and raise the TTL to the tier, never shortening it.

        Returns the remaining TTL in ms, None when the entry is gone.
        """
        return (await self.set_saliences(pair, [(key, salience, tier_seconds)]))[0]

    async def set_saliences(
        self, pair: Pair, updates: Sequence[tuple[str, float, int]]
    ) -> list[int | None]:
        """`set_salience` for many (key, salience, tier_seconds) in one script call."""
        if not updates:
            return []
        args: list[Any] = [INDEX_TTL]
        for _, salience, tier_seconds in updates:
            args += [repr(float(salience)), int(tier_seconds * 1000)]
        result = await self._resalience(
            keys=[keys.short_term_index(pair), *(key for key, _, _ in updates)], args=args
        )
        return [None if int(r) == -2 else int(r) for r in result]

    async def mark_promotion(self, key: str, epoch: float) -> bool:
        """True exactly once per entry: the caller then pushes the promotion job."""
        return int(await self._mark(keys=[key], args=[FIELD_PROMOTION, repr(epoch)])) == 1

    async def queue_promotion(
        self, key: str, epoch: float, *, queue: str, users: str, user: str, job: str
    ) -> bool:
        """`mark_promotion`, and when it is True, RPUSH `job` to `queue` and SADD `user` to
        `users` (before: another hash slot), the mark and the job in one script call (no mark
        without its job)."""
        # The user joins the global set first (another hash slot; an extra member is
        # harmless: the promotion job finds an empty queue and drops the user again).
        await self.redis.sadd(users, user)
        result = await self._queue_promotion(
            keys=[key, queue], args=[FIELD_PROMOTION, repr(epoch), job]
        )
        return int(result) == 1

    # --- reading -------------------------------------------------------------------

    async def get(self, key: str) -> ShortTermEntry | None:
        raw = await self.redis.execute_command("HGETALL", key, **{NEVER_DECODE: True})
        if not raw:
            return None
        fields, vector = decode_hash(as_mapping(raw))
        return ShortTermEntry(key, fields, vector)

    async def members(self, pair: Pair) -> set[str]:
        return (await self._members_versioned(pair))[1]

    async def _members_versioned(self, pair: Pair) -> tuple[str, set[str], str]:
        version, joined, reembedded = await self._members(
            keys=[
                keys.short_term_index(pair),
                keys.short_term_index_version(pair),
                keys.short_term_reembedded(pair),
            ]
        )
        return str(version), {m for m in str(joined).split("\n") if m}, str(reembedded)

    async def _version(self, pair: Pair) -> str:
        return str(await self.redis.get(keys.short_term_index_version(pair)) or "0")

    async def forget(self, pair: Pair, gone: Sequence[str]) -> None:
        """Drop expired keys from the index (and the cache)."""
        if not gone:
            return
        await self._forget(
            keys=[keys.short_term_index(pair), keys.short_term_index_version(pair), *gone], args=[]
        )
        for key in gone:
            self._vectors.pop(key, None)

    async def field_rows(self, pair: Pair, names: Sequence[str]) -> list[FieldRow]:
        """(key, values of `names`) of every live entry of a pair, oldest first, without the
        vectors (the entity magnets read two fields of each): one script call, so the
        pair's size costs the server a loop, not the client a command per entry."""
        if not names:
            return []
        flat = await self._field_rows(keys=[keys.short_term_index(pair)], args=list(names))
        return _field_rows(flat, len(names))

    async def keys_of_turn(self, pair: Pair, turn_id: str, observer: str) -> list[str]:
        """Live entries of the pair written in `turn_id` from `observer`'s side (what makes a
        repeated run's memory write idempotent)."""
        rows = await self.field_rows(pair, ("turn_id", "beobachter"))
        return [key for key, (turn, seen_by) in rows if turn == turn_id and seen_by == observer]

    async def delete(self, pair: Pair, key: str) -> bool:
        """Remove one entry of the pair at the person's request, in one step; False when
        `key` is no live entry of this pair (another pair's key included)."""
        if keys.pair_of_key(key, "kzg") != pair:  # not the pair's: nor its slot (a cluster)
            return False
        removed = await self._forget_one(
            keys=[keys.short_term_index(pair), keys.short_term_index_version(pair), key], args=[]
        )
        self._vectors.pop(key, None)
        return int(removed) == 1

    async def correct(
        self,
        pair: Pair,
        key: str,
        fields: Mapping[str, Any],
        vector: Sequence[float] | np.ndarray,
    ) -> bool:
        """Overwrite fields and the embedding of one live entry of the pair in one step (key,
        TTL and every other field stay); False when `key` is no live entry of this pair."""
        if keys.pair_of_key(key, "kzg") != pair:  # not the pair's: nor its slot (a cluster)
            return False
        payload = flat_fields({**fields, FIELD_EMBEDDING: encode_vector(vector)})
        done = await self._correct(
            keys=[
                keys.short_term_index(pair),
                keys.short_term_index_version(pair),
                keys.short_term_reembedded(pair),
                key,
            ],
            args=[INDEX_TTL, *payload],
        )
        self._vectors.pop(key, None)
        self._pairs.pop(pair, None)
        return int(done) == 1

    async def entries(self, pair: Pair, *, with_ttl: bool = True) -> list[ShortTermEntry]:
        """Every live entry of a pair, newest first (read APIs and distillation)."""
        members = sorted(await self.members(pair), key=key_ms, reverse=True)
        if not members:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for key in members:
            pipe.execute_command("HGETALL", key, **{NEVER_DECODE: True})
            if with_ttl:
                pipe.pttl(key)
        raw = await pipe.execute()
        step = 2 if with_ttl else 1
        result: list[ShortTermEntry] = []
        gone: list[str] = []
        for i, key in enumerate(members):
            values = raw[i * step]
            if not values:
                gone.append(key)
                continue
            fields, vector = decode_hash(as_mapping(values))
            ttl = int(raw[i * step + 1]) if with_ttl else None
            result.append(ShortTermEntry(key, fields, vector, ttl))
        await self.forget(pair, gone)
        return result

    async def match_themes(
        self, pair: Pair, skip: str, wanted: Iterable[str]
    ) -> tuple[list[ThemeRow], list[ThemeRow]]:
        """haeufigkeit + 1 for the pair's entries (other than `skip`) sharing a theme with the
        normalised `wanted`, in one script call that also prunes the index.

        Returns (incremented rows, legacy rows): entries stored without `themen_norm` are not
        matched here but returned with their raw `themen` and `salienz_eingang` for the
        caller to match and increment itself. Only entries with a numeric `salienz_eingang`
        are incremented; wanted themes containing a comma can match nothing and are dropped.
        """
        gone, rows = await self._match_themes(
            keys=[keys.short_term_index(pair), keys.short_term_index_version(pair), skip],
            args=theme_tokens(wanted),
        )
        return self._theme_rows(gone, rows)

    def _theme_rows(
        self, gone: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> tuple[list[ThemeRow], list[ThemeRow]]:
        """A match_themes reply as (incremented rows, legacy rows); pruned keys leave the
        vector cache."""
        for key in gone:
            self._vectors.pop(key, None)
        matched: list[ThemeRow] = []
        legacy: list[ThemeRow] = []
        for row in rows:
            if len(row) == 4:
                matched.append(ThemeRow(row[0], row[2], row[1], int(row[3])))
            else:
                legacy.append(ThemeRow(row[0], row[2], row[1], None))
        return matched, legacy


def _field_rows(flat: Sequence[Any], names: int) -> list[FieldRow]:
    """A field_rows reply (flat key, values, key, ...) as rows, oldest entry first."""
    width = names + 1
    rows = [
        (_text(flat[at]), [None if v is None else _text(v) for v in flat[at + 1 : at + width]])
        for at in range(0, len(flat), width)
    ]
    rows.sort(key=lambda row: key_ms(row[0]))
    return rows


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
