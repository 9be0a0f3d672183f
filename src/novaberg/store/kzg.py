"""Short-term memory (KZG) storage in Redis: entry hashes, a per-pair index, brute-force search.

One entry is the hash `kzg:{u}:{c}:{epoch_ms}` (spec pipeline §3; field names are stored
data) with its embedding as little-endian float32 bytes. The embedded Valkey has no
RediSearch, so a set `kzg_index:{u}:{c}` lists a pair's keys and search is an exact cosine
over the pair's vectors with numpy. Entries expire by TTL only; the index is pruned lazily
whenever a listed key turns out to be gone.

Embeddings never change after creation (spec §3 "Reinforcement"), so vectors are cached per
process; the cache is only a shortcut for fetching, every hit is re-read from Redis.

This module stores what it is given: no model calls and no salience rules (those live in
`novaberg.memory.short_term` and `novaberg.memory.curve`).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import redis.asyncio as aioredis
from redis.client import NEVER_DECODE

from novaberg.store import keys
from novaberg.store.keys import Pair

log = logging.getLogger(__name__)

FIELD_EMBEDDING: Final = "embedding"
"""Hash field holding the float32 bytes (spec pipeline §1.3)."""

FIELD_PROMOTION: Final = "befoerderung_am"
"""Epoch seconds the entry was queued for promotion; makes the push happen once (spec §3)."""

INDEX_TTL: Final = 30 * 86_400
"""The index outlives its longest entry tier (30 d, spec pipeline §3) and is refreshed on
every write, so an abandoned pair's index disappears on its own."""

CACHE_PAIRS: Final = 64
"""Pairs whose vectors stay cached in this process (least recently searched evicted)."""

FETCH_CHUNK: Final = 16
"""Hits re-read from Redis per round while filling the top k (expired keys are skipped)."""

_DTYPE: Final = np.dtype("<f4")

# KEYS[1]=entry, KEYS[2]=index; ARGV[1]=ttl_ms, ARGV[2]=index_ttl_s, ARGV[3..]=field, value
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], KEYS[1])
if redis.call('TTL', KEYS[2]) < tonumber(ARGV[2]) then
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
return 1
"""

# KEYS[1]=entry, KEYS[2]=index; ARGV[1]=salienz, ARGV[2]=tier ttl_ms, ARGV[3]=index_ttl_s
# Returns the remaining TTL in ms after the update, or -2 when the entry is gone.
_RESALIENCE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
redis.call('HSET', KEYS[1], 'salienz', ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left >= 0 and left < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  left = tonumber(ARGV[2])
end
if redis.call('TTL', KEYS[2]) < tonumber(ARGV[3]) then
  redis.call('EXPIRE', KEYS[2], ARGV[3])
end
return left
"""

# KEYS[1]=entry; returns the new haeufigkeit, or -1 when the entry is gone.
_INCREMENT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('HINCRBY', KEYS[1], 'haeufigkeit', 1)
"""

# KEYS[1]=entry; ARGV[1]=epoch. 1 = marked now, 0 = already marked, -1 = entry gone.
_MARK_PROMOTION = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
"""


def encode_vector(vector: Sequence[float] | np.ndarray) -> bytes:
    return np.asarray(vector, dtype=_DTYPE).tobytes()


def decode_vector(raw: bytes | None) -> np.ndarray | None:
    if not raw or len(raw) % _DTYPE.itemsize:
        return None
    return np.frombuffer(raw, dtype=_DTYPE)


def similarity_of(cosine: float) -> float:
    """The search score (1 + cos) / 2 = 1 − cosine distance / 2 (spec pipeline §3)."""
    return (1.0 + cosine) / 2.0


@dataclass(slots=True)
class KzgEntry:
    """One stored entry: its key, text fields (embedding removed) and vector."""

    key: str
    fields: dict[str, str]
    vector: np.ndarray | None = None
    ttl_ms: int | None = None


@dataclass(slots=True)
class KzgHit:
    """A search result: cosine to the query and the spec's similarity (1 + cos) / 2."""

    key: str
    cosine: float
    similarity: float
    fields: dict[str, str]


@dataclass(slots=True)
class ThemeRow:
    """What reinforcement needs of a neighbour (read in one pipelined pass)."""

    key: str
    themen: str
    salienz_eingang: str | None
    haeufigkeit: str | None


@dataclass
class _PairCache:
    members: frozenset[str]
    keys: list[str]
    matrix: np.ndarray  # rows L2-normalised, float32


def _decode_hash(raw: Mapping[bytes, bytes] | None) -> tuple[dict[str, str], np.ndarray | None]:
    fields: dict[str, str] = {}
    vector = None
    for name_b, value in (raw or {}).items():
        name = name_b.decode("utf-8")
        if name == FIELD_EMBEDDING:
            vector = decode_vector(value)
        else:
            fields[name] = value.decode("utf-8", errors="replace")
    return fields, vector


def _flat(fields: Mapping[str, Any]) -> list[str | bytes]:
    args: list[str | bytes] = []
    for name, value in fields.items():
        if value is None:
            continue
        args.append(name)
        args.append(value if isinstance(value, bytes) else str(value))
    return args


class KzgStore:
    """Redis access for short-term memory entries of every pair."""

    def __init__(self, redis: aioredis.Redis, *, cache_vectors: bool = True) -> None:
        self.redis = redis
        self.cache_vectors = cache_vectors
        self._vectors: dict[str, np.ndarray] = {}
        self._pairs: OrderedDict[Pair, _PairCache] = OrderedDict()
        self._create = redis.register_script(_CREATE)
        self._resalience = redis.register_script(_RESALIENCE)
        self._increment = redis.register_script(_INCREMENT)
        self._mark = redis.register_script(_MARK_PROMOTION)

    # --- writing -------------------------------------------------------------------

    async def create(
        self,
        pair: Pair,
        fields: Mapping[str, Any],
        vector: Sequence[float] | np.ndarray,
        *,
        ttl_seconds: int,
        epoch_ms: int,
    ) -> str:
        """Store a new entry under the first free `kzg:{u}:{c}:{ms}` at or after `epoch_ms`.

        Two entries of one turn can share a millisecond; the create script refuses an
        existing key atomically and the next millisecond is tried.
        """
        payload = _flat({**fields, FIELD_EMBEDDING: encode_vector(vector)})
        index = keys.kzg_index(pair)
        for offset in range(1000):
            key = keys.kzg_entry(pair, epoch_ms + offset)
            created = await self._create(
                keys=[key, index], args=[int(ttl_seconds * 1000), INDEX_TTL, *payload]
            )
            if int(created) == 1:
                return key
        raise RuntimeError(f"no free short-term key for {pair} near {epoch_ms}")

    async def increment_frequency(self, key: str) -> int | None:
        """haeufigkeit + 1; None when the entry has expired meanwhile."""
        result = int(await self._increment(keys=[key]))
        return None if result < 0 else result

    async def set_salience(
        self, pair: Pair, key: str, salience: float, *, tier_seconds: int
    ) -> int | None:
        """Store a recomputed salience and raise the TTL to the tier, never shortening it.

        Returns the remaining TTL in ms, None when the entry is gone.
        """
        left = int(
            await self._resalience(
                keys=[key, keys.kzg_index(pair)],
                args=[repr(float(salience)), int(tier_seconds * 1000), INDEX_TTL],
            )
        )
        return None if left == -2 else left

    async def mark_promotion(self, key: str, epoch: float) -> bool:
        """True exactly once per entry: the caller then pushes the promotion job."""
        return int(await self._mark(keys=[key], args=[FIELD_PROMOTION, repr(epoch)])) == 1

    # --- reading -------------------------------------------------------------------

    async def get(self, key: str) -> KzgEntry | None:
        raw = await self.redis.execute_command("HGETALL", key, **{NEVER_DECODE: True})
        if not raw:
            return None
        fields, vector = _decode_hash(_as_mapping(raw))
        return KzgEntry(key, fields, vector)

    async def members(self, pair: Pair) -> set[str]:
        return set(await self.redis.smembers(keys.kzg_index(pair)))

    async def forget(self, pair: Pair, gone: Sequence[str]) -> None:
        """Drop expired keys from the index (and the cache)."""
        if not gone:
            return
        await self.redis.srem(keys.kzg_index(pair), *gone)
        for key in gone:
            self._vectors.pop(key, None)

    async def entries(self, pair: Pair, *, with_ttl: bool = True) -> list[KzgEntry]:
        """Every live entry of a pair, newest first (read APIs and distillation)."""
        members = sorted(await self.members(pair), key=_key_ms, reverse=True)
        if not members:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for key in members:
            pipe.execute_command("HGETALL", key, **{NEVER_DECODE: True})
            if with_ttl:
                pipe.pttl(key)
        raw = await pipe.execute()
        step = 2 if with_ttl else 1
        result: list[KzgEntry] = []
        gone: list[str] = []
        for i, key in enumerate(members):
            values = raw[i * step]
            if not values:
                gone.append(key)
                continue
            fields, vector = _decode_hash(_as_mapping(values))
            ttl = int(raw[i * step + 1]) if with_ttl else None
            result.append(KzgEntry(key, fields, vector, ttl))
        await self.forget(pair, gone)
        return result

    async def theme_rows(self, pair: Pair) -> list[ThemeRow]:
        """themen / salienz_eingang / haeufigkeit of every live entry (prunes the index)."""
        members = list(await self.members(pair))
        if not members:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for key in members:
            pipe.hmget(key, ["themen", "salienz_eingang", "haeufigkeit", "user_id"])
        raw = await pipe.execute()
        rows: list[ThemeRow] = []
        gone: list[str] = []
        for key, (themen, intake, frequency, owner) in zip(members, raw, strict=True):
            if owner is None:
                gone.append(key)
                continue
            rows.append(ThemeRow(key, themen or "", intake, frequency))
        await self.forget(pair, gone)
        return rows

    async def nearest(
        self, pair: Pair, vector: Sequence[float] | np.ndarray, k: int = 10
    ) -> list[KzgHit]:
        """The k entries of the pair with the highest cosine to `vector`, both perspectives.

        Exact search (no ANN): every vector of the pair is compared. Entries that expired
        since they were indexed are skipped and pruned, so fewer than k may come back.
        """
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if k <= 0 or query.ndim != 1 or norm == 0.0 or not np.isfinite(norm):
            return []
        cache = await self._matrix(pair, query.shape[0])
        if cache is None:
            return []
        scores = cache.matrix @ (query / norm)
        order = np.argsort(-scores, kind="stable")
        hits: list[KzgHit] = []
        gone: list[str] = []
        start = 0
        while len(hits) < k and start < len(order):
            chunk = [int(i) for i in order[start : start + max(FETCH_CHUNK, k)]]
            start += len(chunk)
            pipe = self.redis.pipeline(transaction=False)
            for i in chunk:
                pipe.execute_command("HGETALL", cache.keys[i], **{NEVER_DECODE: True})
            for i, raw in zip(chunk, await pipe.execute(), strict=True):
                key = cache.keys[i]
                if not raw:
                    gone.append(key)
                    continue
                if len(hits) < k:
                    fields, _ = _decode_hash(_as_mapping(raw))
                    cosine = float(scores[i])
                    hits.append(KzgHit(key, cosine, similarity_of(cosine), fields))
        if gone:
            await self.forget(pair, gone)
            self._pairs.pop(pair, None)
        return hits

    async def _matrix(self, pair: Pair, dim: int) -> _PairCache | None:
        members = frozenset(await self.members(pair))
        if not members:
            self._pairs.pop(pair, None)
            return None
        cached = self._pairs.get(pair)
        if cached is not None and cached.members == members and cached.matrix.shape[1] == dim:
            self._pairs.move_to_end(pair)
            return cached
        missing = [key for key in members if key not in self._vectors]
        fetched: dict[str, np.ndarray] = {}
        gone: list[str] = []
        if missing:
            pipe = self.redis.pipeline(transaction=False)
            for key in missing:
                pipe.execute_command("HGET", key, FIELD_EMBEDDING, **{NEVER_DECODE: True})
            for key, raw in zip(missing, await pipe.execute(), strict=True):
                vec = decode_vector(raw)
                if vec is None:
                    gone.append(key)
                else:
                    fetched[key] = vec
        if gone:
            await self.forget(pair, gone)
        if self.cache_vectors:
            self._vectors.update(fetched)
        rows: list[str] = []
        vectors: list[np.ndarray] = []
        skipped = 0
        for key in sorted(members - set(gone)):
            vec = fetched.get(key)
            if vec is None:
                vec = self._vectors.get(key)
            if vec is None:
                continue
            if vec.shape[0] != dim:
                skipped += 1
                continue
            rows.append(key)
            vectors.append(vec)
        if skipped:
            log.error(
                "kzg %s: %d entries have another embedding dimension than %d", pair, skipped, dim
            )
        if not rows:
            return None
        matrix = np.vstack(vectors).astype(np.float32, copy=False)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        entry = _PairCache(members - frozenset(gone), rows, matrix / norms)
        if self.cache_vectors:
            self._pairs[pair] = entry
            self._pairs.move_to_end(pair)
            while len(self._pairs) > CACHE_PAIRS:
                _, old = self._pairs.popitem(last=False)
                for key in old.keys:
                    self._vectors.pop(key, None)
        return entry


def _as_mapping(raw: Any) -> dict[bytes, bytes]:
    """HGETALL with NEVER_DECODE comes back as a dict (RESP2 callback) or a flat list."""
    if isinstance(raw, dict):
        return raw
    items = list(raw)
    return dict(zip(items[::2], items[1::2], strict=True))


def _key_ms(key: str) -> int:
    try:
        return int(key.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return 0


def entry_epoch_ms(key: str) -> int | None:
    """The creation millisecond encoded in a `kzg:{u}:{c}:{ms}` key."""
    value = _key_ms(key)
    return value or None
