"""Short-term memory (KZG) storage in Redis: entry hashes, a per-pair index, brute-force search.

One entry is the hash `kzg:{u}:{c}:{epoch_ms}` (docs/behaviour/memory.md#short-term-memory;
field names are stored data) with its embedding as little-endian float32 bytes. The
embedded Valkey has no RediSearch, so a set `kzg_index:{u}:{c}` lists a pair's keys and
search is an exact cosine over the pair's vectors with numpy. Entries expire by TTL only;
the index is pruned lazily whenever a listed key turns out to be gone.

Embeddings never change after creation, so vectors are cached per process; the cache is
only a shortcut for fetching, every hit is re-read from Redis, in the same script call that
checks the cache is still current.

Every Redis round trip costs this CPU-bound process noticeable client time, so the usual
paths are one script call each: a search, a create (with the profile flag and the
neighbours' frequency bump, matched on the writer-normalised `themen_norm`), a promotion mark.

This module stores what it is given: no model calls and no salience rules (those live in
`novaberg.memory.short_term` and `novaberg.memory.curve`).
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Final

import numpy as np
import redis.asyncio as aioredis
from redis.client import NEVER_DECODE
from redis.exceptions import NoScriptError

from novaberg.store import keys
from novaberg.store.keys import Pair

log = logging.getLogger(__name__)

FIELD_EMBEDDING: Final = "embedding"
"""Hash field holding the float32 bytes."""

FIELD_PROMOTION: Final = "befoerderung_am"
"""Epoch seconds the entry was queued for promotion; makes the push happen once."""

FIELD_THEMES_NORM: Final = "themen_norm"
"""The entry's themes already normalised by the writer, as `themes_field` builds them, so a
script can match themes without lowercasing (Lua's `string.lower` is ASCII-only). Not part of
the documented entry fields; readers pick their fields by name and never show it."""

INDEX_TTL: Final = 30 * 86_400
"""The index outlives its longest entry tier (30 d) and is refreshed on
every write, so an abandoned pair's index disappears on its own."""

CACHE_PAIRS: Final = 64
"""Pairs whose vectors stay cached in this process (least recently searched evicted)."""

VECTOR_BATCH: Final = 2000
"""Vectors fetched per script call (bounds one reply to ~3 MB at 384 dims)."""

FETCH_CHUNK: Final = 16
"""Hits re-read from Redis per round while filling the top k (expired keys are skipped)."""

_DTYPE: Final = np.dtype("<f4")

# match_themes(index, version, entry to skip, wanted tokens ",theme,"): every other live
# entry whose themen_norm contains a wanted token and that has a numeric salienz_eingang gets
# haeufigkeit + 1 -> row {key, salienz_eingang, themen_norm, haeufigkeit}. Entries without
# themen_norm (written before it existed) come back unchanged as {key, salienz_eingang,
# themen} for the caller to match. Gone members (no user_id) are dropped from the index.
# Returns {gone keys, rows}.
_MATCH_FUNCTION = """
local function match_themes(index, version, skip, tokens)
  local rows, gone = {}, {}
  for _, k in ipairs(redis.call('SMEMBERS', index)) do
    local r = redis.call('HMGET', k, 'user_id', 'themen_norm', 'salienz_eingang', 'themen')
    if not r[1] then
      gone[#gone + 1] = k
    elseif k ~= skip and r[3] then
      if r[2] then
        if tonumber(r[3]) then
          for _, token in ipairs(tokens) do
            if string.find(r[2], token, 1, true) then
              rows[#rows + 1] = {k, r[3], r[2], redis.call('HINCRBY', k, 'haeufigkeit', 1)}
              break
            end
          end
        end
      elseif r[4] and r[4] ~= '' then
        rows[#rows + 1] = {k, r[3], r[4]}
      end
    end
  end
  if #gone > 0 then
    redis.call('SREM', index, unpack(gone))
    redis.call('INCR', version)
  end
  return {gone, rows}
end
"""

# KEYS[1]=index, KEYS[2]=version, KEYS[3]=entry to skip; ARGV=wanted tokens.
_MATCH_THEMES = _MATCH_FUNCTION + "return match_themes(KEYS[1], KEYS[2], KEYS[3], ARGV)\n"

# KEYS[1]=entry, KEYS[2]=index, KEYS[3]=version, KEYS[4]=optional flag set to "1";
# ARGV[1]=ttl_ms, ARGV[2]=index_ttl_s, ARGV[3]=n wanted tokens (-1: no matching),
# ARGV[4..3+n]=tokens, then field, value. Returns {0} if the key exists, else {the index's
# new version (≥ 1)}, with match_themes' gone keys and rows for the new entry when n ≥ 0.
_CREATE = (
    _MATCH_FUNCTION
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
local n = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], unpack(ARGV, 4 + math.max(n, 0)))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], KEYS[1])
local version = redis.call('INCR', KEYS[3])
if redis.call('TTL', KEYS[2]) < tonumber(ARGV[2]) then
  redis.call('EXPIRE', KEYS[2], ARGV[2])
  redis.call('EXPIRE', KEYS[3], ARGV[2])
end
if KEYS[4] then redis.call('SET', KEYS[4], '1') end
if n < 0 then return {version} end
local found = match_themes(KEYS[2], KEYS[3], KEYS[1], {unpack(ARGV, 4, 3 + n)})
return {version, found[1], found[2]}
"""
)

# KEYS[1]=index, KEYS[2]=version, KEYS[3..]=keys to drop
_FORGET = """
local n = redis.call('SREM', KEYS[1], unpack(KEYS, 3))
if n > 0 then redis.call('INCR', KEYS[2]) end
return n
"""

# KEYS[1]=index, KEYS[2]=version -> {version, members joined by newline}
# (one bulk reply: the pure-Python RESP parser is slow on thousands of small replies)
_MEMBERS = """
return {redis.call('GET', KEYS[2]) or '0', table.concat(redis.call('SMEMBERS', KEYS[1]), '\\n')}
"""

# KEYS=entry keys; ARGV[1]=expected byte length ->
# {concatenated vectors of the good keys, cjson [missing indices], cjson [other-size indices]}
_VECTORS = """
local parts, missing, other = {}, {}, {}
local size = tonumber(ARGV[1])
for i, k in ipairs(KEYS) do
  local v = redis.call('HGET', k, 'embedding')
  if not v then
    missing[#missing + 1] = i
  elseif #v ~= size then
    other[#other + 1] = i
  else
    parts[#parts + 1] = v
  end
end
return {table.concat(parts), cjson.encode(missing), cjson.encode(other)}
"""

# KEYS[1]=index, KEYS[2]=version; ARGV[1]=expected byte length -> {version, good keys joined
# by newline, their concatenated vectors, cjson [missing keys], cjson [other-size keys]}
_PAIR_VECTORS = """
local parts, good, missing, other = {}, {}, {}, {}
local size = tonumber(ARGV[1])
for _, k in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local v = redis.call('HGET', k, 'embedding')
  if not v then
    missing[#missing + 1] = k
  elseif #v ~= size then
    other[#other + 1] = k
  else
    parts[#parts + 1] = v
    good[#good + 1] = k
  end
end
return {redis.call('GET', KEYS[2]) or '0', table.concat(good, '\\n'), table.concat(parts),
        cjson.encode(missing), cjson.encode(other)}
"""

# KEYS[1]=version, KEYS[2..]=entries -> {version, then per entry its flat field/value list
# without the embedding (nil when the entry is gone)}. Version and hashes are read together,
# so a search whose cached matrix is still current needs this one call only.
_HITS = """
local out = {redis.call('GET', KEYS[1]) or '0'}
for i = 2, #KEYS do
  local flat = redis.call('HGETALL', KEYS[i])
  local kept = false
  if #flat > 0 then
    kept = {}
    for j = 1, #flat, 2 do
      if flat[j] ~= 'embedding' then
        kept[#kept + 1] = flat[j]
        kept[#kept + 1] = flat[j + 1]
      end
    end
  end
  out[i] = kept
end
return out
"""

# KEYS[1]=index, KEYS[2..]=entries; ARGV[1]=index_ttl_s, then per entry salienz, tier ttl_ms.
# Per entry the remaining TTL in ms after the update (raised to the tier, never shortened),
# or -2 when the entry is gone. One script call for all neighbours of a new entry.
_RESALIENCE = """
local out = {}
for i = 2, #KEYS do
  local key = KEYS[i]
  local tier = tonumber(ARGV[2 * i - 1])
  if redis.call('EXISTS', key) == 0 then
    out[#out + 1] = -2
  else
    redis.call('HSET', key, 'salienz', ARGV[2 * i - 2])
    local left = redis.call('PTTL', key)
    if left >= 0 and left < tier then
      redis.call('PEXPIRE', key, tier)
      left = tier
    end
    out[#out + 1] = left
  end
end
if redis.call('TTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return out
"""

# KEYS=entries; per entry the new haeufigkeit, or -1 when the entry is gone.
_INCREMENT = """
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 0 then
    out[i] = -1
  else
    out[i] = redis.call('HINCRBY', key, 'haeufigkeit', 1)
  end
end
return out
"""

# KEYS[1]=entry; ARGV[1]=epoch. 1 = marked now, 0 = already marked, -1 = entry gone.
_MARK_PROMOTION = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
"""

# KEYS[1]=entry, KEYS[2]=queue list, KEYS[3]=set of queued users; ARGV[1]=field,
# ARGV[2]=epoch, ARGV[3]=job, ARGV[4]=user. _MARK_PROMOTION plus, when newly marked, the push.
_QUEUE_PROMOTION = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[3], ARGV[4])
return 1
"""


def encode_vector(vector: Sequence[float] | np.ndarray) -> bytes:
    return np.asarray(vector, dtype=_DTYPE).tobytes()


def decode_vector(raw: bytes | None) -> np.ndarray | None:
    if not raw or len(raw) % _DTYPE.itemsize:
        return None
    return np.frombuffer(raw, dtype=_DTYPE)


def similarity_of(cosine: float) -> float:
    """The search score (1 + cos) / 2 = 1 − cosine distance / 2."""
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
    """A search result: cosine to the query and the similarity (1 + cos) / 2."""

    key: str
    cosine: float
    similarity: float
    fields: dict[str, str]


@dataclass(slots=True)
class ThemeRow:
    """What reinforcement needs of a neighbour.

    From `match_themes`: `themen` is the stored `themen_norm`, `haeufigkeit` the value after
    the increment. A legacy row (entry without `themen_norm`, not incremented) has the raw
    `themen` and `haeufigkeit` None.
    """

    key: str
    themen: str
    salienz_eingang: str | None
    haeufigkeit: int | None


def themes_field(normalised: Iterable[str]) -> str:
    """`themen_norm` of normalised themes: ",a,b," (sorted; "," for none).

    A token ",t," occurs in it exactly when t is one of the themes, as long as no theme
    contains a comma (the stored `themen` are split at commas, so none does)."""
    return "," + "".join(f"{theme}," for theme in sorted(set(normalised)))


def _tokens(wanted: Iterable[str]) -> list[str]:
    """Search tokens ",theme," of normalised themes; a theme with a comma can match no stored
    theme and is left out."""
    return [f",{theme}," for theme in set(wanted) if theme and "," not in theme]


def themes_of_field(value: str) -> list[str]:
    """The sorted themes of a `themes_field` value."""
    return [theme for theme in value.split(",") if theme]


@dataclass
class _PairCache:
    version: str
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
        self._forget = redis.register_script(_FORGET)
        self._members = redis.register_script(_MEMBERS)
        self._vectors_script = redis.register_script(_VECTORS)
        self._pair_vectors = redis.register_script(_PAIR_VECTORS)
        self._hits = redis.register_script(_HITS)
        self._match_themes = redis.register_script(_MATCH_THEMES)
        self._resalience = redis.register_script(_RESALIENCE)
        self._increment = redis.register_script(_INCREMENT)
        self._mark = redis.register_script(_MARK_PROMOTION)
        self._queue_promotion = redis.register_script(_QUEUE_PROMOTION)

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
        key, _ = await self._create_entry(pair, fields, vector, ttl_seconds, epoch_ms, flag, None)
        return key

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
    ) -> tuple[str, tuple[list[ThemeRow], list[ThemeRow]]]:
        """`create`, then `match_themes(pair, new key, themes)` in the same script call:
        (key, (incremented rows, legacy rows)). `themes=None` skips the matching."""
        return await self._create_entry(pair, fields, vector, ttl_seconds, epoch_ms, flag, themes)

    async def _create_entry(
        self,
        pair: Pair,
        fields: Mapping[str, Any],
        vector: Sequence[float] | np.ndarray,
        ttl_seconds: int,
        epoch_ms: int,
        flag: str | None,
        themes: Iterable[str] | None,
    ) -> tuple[str, tuple[list[ThemeRow], list[ThemeRow]]]:
        payload = _flat({**fields, FIELD_EMBEDDING: encode_vector(vector)})
        index = keys.kzg_index(pair)
        version = keys.kzg_index_version(pair)
        script_keys = [index, version] if flag is None else [index, version, flag]
        tokens = [] if themes is None else _tokens(themes)
        count = -1 if themes is None else len(tokens)
        args = [int(ttl_seconds * 1000), INDEX_TTL, count, *tokens, *payload]
        for offset in range(1000):
            key = keys.kzg_entry(pair, epoch_ms + offset)
            reply = await self._create(keys=[key, *script_keys], args=args)
            created = int(reply[0])
            if created >= 1:
                self._write_through(pair, key, vector, created)
                found = self._theme_rows(reply[1], reply[2]) if len(reply) == 3 else ([], [])
                return key, found
        raise RuntimeError(f"no free short-term key for {pair} near {epoch_ms}")

    def _write_through(
        self, pair: Pair, key: str, vector: Sequence[float] | np.ndarray, version: int
    ) -> None:
        """Add our own new entry to the cached matrix when it is the only change since the
        cache was built (version n-1 → n), so the next search needs no refetch."""
        cached = self._pairs.get(pair)
        if not self.cache_vectors or cached is None or cached.version != str(version - 1):
            return
        row = np.asarray(vector, dtype=_DTYPE)
        norm = float(np.linalg.norm(row))
        if row.ndim != 1 or row.shape[0] != cached.matrix.shape[1] or norm == 0.0:
            return
        self._vectors[key] = row
        cached.keys.append(key)
        cached.matrix = np.vstack([cached.matrix, (row / norm)[None, :]])
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
            keys=[keys.kzg_index(pair), *(key for key, _, _ in updates)], args=args
        )
        return [None if int(r) == -2 else int(r) for r in result]

    async def mark_promotion(self, key: str, epoch: float) -> bool:
        """True exactly once per entry: the caller then pushes the promotion job."""
        return int(await self._mark(keys=[key], args=[FIELD_PROMOTION, repr(epoch)])) == 1

    async def queue_promotion(
        self, key: str, epoch: float, *, queue: str, users: str, user: str, job: str
    ) -> bool:
        """`mark_promotion`, and when it is True, RPUSH `job` to `queue` and SADD `user` to
        `users`, all in one script call (one round trip, and no mark without its job)."""
        result = await self._queue_promotion(
            keys=[key, queue, users], args=[FIELD_PROMOTION, repr(epoch), job, user]
        )
        return int(result) == 1

    # --- reading -------------------------------------------------------------------

    async def get(self, key: str) -> KzgEntry | None:
        raw = await self.redis.execute_command("HGETALL", key, **{NEVER_DECODE: True})
        if not raw:
            return None
        fields, vector = _decode_hash(_as_mapping(raw))
        return KzgEntry(key, fields, vector)

    async def members(self, pair: Pair) -> set[str]:
        return (await self._members_versioned(pair))[1]

    async def _members_versioned(self, pair: Pair) -> tuple[str, set[str]]:
        version, joined = await self._members(
            keys=[keys.kzg_index(pair), keys.kzg_index_version(pair)]
        )
        return str(version), {m for m in str(joined).split("\n") if m}

    async def _version(self, pair: Pair) -> str:
        return str(await self.redis.get(keys.kzg_index_version(pair)) or "0")

    async def forget(self, pair: Pair, gone: Sequence[str]) -> None:
        """Drop expired keys from the index (and the cache)."""
        if not gone:
            return
        await self._forget(
            keys=[keys.kzg_index(pair), keys.kzg_index_version(pair), *gone], args=[]
        )
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
            keys=[keys.kzg_index(pair), keys.kzg_index_version(pair), skip], args=_tokens(wanted)
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

    async def nearest(
        self, pair: Pair, vector: Sequence[float] | np.ndarray, k: int = 10
    ) -> list[KzgHit]:
        """The k entries of the pair with the highest cosine to `vector`, both perspectives.

        Exact search (no ANN): every vector of the pair is compared. Entries that expired
        since they were indexed are skipped and pruned, so fewer than k may come back.
        A current cached matrix makes this one round trip (see `_ranked_top`).
        """
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if k <= 0 or query.ndim != 1 or norm == 0.0 or not np.isfinite(norm):
            return []
        first = await self._ranked_top(pair, query / norm, k)
        if first is None:
            return []
        cache, scores, order, chunk, fetched = first
        hits: list[KzgHit] = []
        gone: list[str] = []
        start = len(chunk)
        while True:
            for i, fields in zip(chunk, _decode_flats(fetched), strict=True):
                key = cache.keys[i]
                if fields is None:
                    gone.append(key)
                elif len(hits) < k:
                    cosine = float(scores[i])
                    hits.append(KzgHit(key, cosine, similarity_of(cosine), fields))
            if len(hits) >= k or start >= len(scores):
                break
            if start >= len(order):  # more expired entries than expected: rank them all
                order = _best_first(scores, len(scores))
            chunk = [int(i) for i in order[start : start + FETCH_CHUNK]]
            start += len(chunk)
            _, fetched = await self._fetch_hits(pair, [cache.keys[i] for i in chunk])
        if gone:
            await self.forget(pair, gone)
            self._pairs.pop(pair, None)
        return hits

    async def _ranked_top(
        self, pair: Pair, unit: np.ndarray, k: int
    ) -> tuple[_PairCache, np.ndarray, np.ndarray, list[int], list[Any]] | None:
        """(matrix, cosines, ranking, top k indices, their hashes), or None for no entries.

        A cached matrix is trusted when the index version read along with the hits is still
        its version (one round trip); otherwise it is refreshed and the ranking redone."""
        cached = self._pairs.get(pair)
        if cached is not None and cached.matrix.shape[1] == unit.shape[0]:
            scores, order, chunk = _rank(cached, unit, k)
            version, fetched = await self._fetch_hits(pair, [cached.keys[i] for i in chunk])
            if version == cached.version:
                self._pairs.move_to_end(pair)
                return cached, scores, order, chunk, fetched
        cache = await self._matrix(pair, unit.shape[0])
        if cache is None:
            return None
        scores, order, chunk = _rank(cache, unit, k)
        _, fetched = await self._fetch_hits(pair, [cache.keys[i] for i in chunk])
        return cache, scores, order, chunk, fetched

    async def _fetch_hits(self, pair: Pair, entry_keys: Sequence[str]) -> tuple[str, list[Any]]:
        """(index version, per key its flat field/value list without the embedding, empty
        when the key is gone) in one script call."""
        raw = await self._binary_script(self._hits, [keys.kzg_index_version(pair), *entry_keys], [])
        return raw[0].decode("utf-8"), raw[1:]

    async def _matrix(self, pair: Pair, dim: int) -> _PairCache | None:
        """The pair's matrix rebuilt from Redis (only vectors not cached yet are fetched);
        called when there is no cache or it turned out stale."""
        cached = self._pairs.get(pair)
        block: np.ndarray | None = None
        if cached is None:  # first search of this pair: everything in one reply
            version, members, fetched, gone, other, block = await self._fetch_pair(pair, dim)
        else:  # only the vectors this process has not seen yet
            version, members = await self._members_versioned(pair)
            wanted = sorted(k for k in members if k not in self._vectors)
            fetched, gone, other = await self._fetch_vectors(wanted, dim)
        if not members:
            self._pairs.pop(pair, None)
            return None
        if gone:
            await self.forget(pair, gone)
            version = await self._version(pair)
        if other:
            log.error(
                "kzg %s: %d entries have another embedding dimension than %d", pair, len(other), dim
            )
        if self.cache_vectors:
            self._vectors.update(fetched)
        if block is not None:  # the reply's block is the matrix already, in reply order
            rows = list(fetched)
            if not rows:
                return None
            matrix = block
        else:
            rows = []
            vectors: list[np.ndarray] = []
            skip = set(gone) | set(other)
            for key in sorted(members):
                if key in skip:
                    continue
                vec = fetched.get(key)
                if vec is None:
                    vec = self._vectors.get(key)
                if vec is None or vec.shape[0] != dim:
                    continue
                rows.append(key)
                vectors.append(vec)
            if not rows:
                return None
            matrix = np.vstack(vectors).astype(np.float32, copy=False)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        entry = _PairCache(version, rows, matrix / norms)
        if self.cache_vectors:
            self._pairs[pair] = entry
            self._pairs.move_to_end(pair)
            while len(self._pairs) > CACHE_PAIRS:
                _, old = self._pairs.popitem(last=False)
                for key in old.keys:
                    self._vectors.pop(key, None)
        return entry

    async def _fetch_pair(
        self, pair: Pair, dim: int
    ) -> tuple[str, set[str], dict[str, np.ndarray], list[str], list[str], np.ndarray | None]:
        """(version, members, vectors, missing keys, other-dimension keys, the vectors as one
        matrix in the order of `vectors`) in one script call."""
        raw = await self._binary_script(
            self._pair_vectors,
            [keys.kzg_index(pair), keys.kzg_index_version(pair)],
            [dim * _DTYPE.itemsize],
        )
        version, joined, blob, lost, odd = raw
        good = [k for k in joined.decode("utf-8").split("\n") if k]
        missing = [str(k) for k in _as_list(lost)]
        other = [str(k) for k in _as_list(odd)]
        found: dict[str, np.ndarray] = {}
        matrix = None
        if good:
            matrix = np.frombuffer(blob, dtype=_DTYPE).reshape(len(good), dim)
            found = {key: matrix[row] for row, key in enumerate(good)}
        members = set(good) | set(missing) | set(other)
        return version.decode("utf-8"), members, found, missing, other, matrix

    async def _fetch_vectors(
        self, wanted: Sequence[str], dim: int
    ) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
        """Vectors of `wanted` in one reply: (found, missing keys, other-dimension keys)."""
        found: dict[str, np.ndarray] = {}
        missing: list[str] = []
        other: list[str] = []
        size = dim * _DTYPE.itemsize
        for start in range(0, len(wanted), VECTOR_BATCH):
            batch = list(wanted[start : start + VECTOR_BATCH])
            blob, lost, odd = await self._binary_script(self._vectors_script, batch, [size])
            lost_i = _indices(lost)
            odd_i = _indices(odd)
            missing += [batch[i - 1] for i in lost_i]
            other += [batch[i - 1] for i in odd_i]
            bad = set(lost_i) | set(odd_i)
            good = [key for i, key in enumerate(batch, start=1) if i not in bad]
            matrix = np.frombuffer(blob, dtype=_DTYPE).reshape(len(good), dim) if good else None
            for row, key in enumerate(good):
                assert matrix is not None
                found[key] = matrix[row]
        return found, missing, other

    async def _binary_script(self, script: Any, keys_: Sequence[str], args: Sequence[Any]) -> Any:
        """Run a registered script without decoding its (binary) reply."""
        try:
            return await self.redis.execute_command(
                "EVALSHA", script.sha, len(keys_), *keys_, *args, **{NEVER_DECODE: True}
            )
        except NoScriptError:
            return await self.redis.execute_command(
                "EVAL", script.script, len(keys_), *keys_, *args, **{NEVER_DECODE: True}
            )


def _rank(cache: _PairCache, unit: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(cosines, the best k + FETCH_CHUNK indices best first, the first k of them)."""
    # einsum: a plain single-threaded loop; BLAS threads only lose on 2 busy cores
    scores = np.einsum("ij,j->i", cache.matrix, unit, optimize=False)
    order = _best_first(scores, k + FETCH_CHUNK)
    return scores, order, [int(i) for i in order[:k]]


def _decode_flats(flats: Sequence[Sequence[bytes] | None]) -> list[dict[str, str] | None]:
    """Flat field/value replies (no embedding in them) as text fields; None stays None.

    Decoded in one go (join, decode, split: all in C); NUL is ASCII, so replacing invalid
    UTF-8 gives what decoding each value alone gives. A value holding NUL itself is rare and
    falls back to decoding value by value."""
    items = list(chain.from_iterable(flat for flat in flats if flat))
    parts = b"\0".join(items).decode("utf-8", errors="replace").split("\0")
    if len(parts) != len(items):
        parts = [item.decode("utf-8", errors="replace") for item in items]
    result: list[dict[str, str] | None] = []
    start = 0
    for flat in flats:
        if flat is None:
            result.append(None)
            continue
        end = start + len(flat)
        result.append(dict(zip(parts[start:end:2], parts[start + 1 : end : 2], strict=True)))
        start = end
    return result


def _best_first(scores: np.ndarray, count: int) -> np.ndarray:
    """Indices of the `count` highest scores, best first (argpartition, then sort)."""
    if count >= len(scores):
        return np.argsort(-scores, kind="stable")
    top = np.argpartition(-scores, count - 1)[:count]
    return top[np.argsort(-scores[top], kind="stable")]


def _as_list(raw: bytes | str) -> list[Any]:
    """cjson encodes an empty Lua table as {}; a JSON list otherwise."""
    value = json.loads(raw)
    return value if isinstance(value, list) else []


def _indices(raw: bytes | str) -> list[int]:
    return [int(i) for i in _as_list(raw)]


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
