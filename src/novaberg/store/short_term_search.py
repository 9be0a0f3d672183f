"""Exact nearest-neighbour search over a pair's short-term vectors, with a process cache.

The embedded Valkey has no RediSearch, so search is an exact cosine over the pair's vectors
with numpy. The vectors are cached per process; the cache is only a shortcut for fetching:
every hit is re-read from Redis in the same script call that checks the cache is still
current (the index version). An embedding changes only by a person's correction, which
also bumps the pair's re-embedding counter: a cache built under another counter refetches
every vector of the pair.

`ShortTermSearch` is the search half of `ShortTermStore` (store/short_term.py), which supplies the Redis
client, the scripts and the index bookkeeping it declares.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import redis.asyncio as aioredis
from redis.client import NEVER_DECODE
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.short_term_codec import (
    DTYPE,
    ShortTermHit,
    as_list,
    decode_flats,
    indices,
    similarity_of,
)

log = logging.getLogger(__name__)

CACHE_PAIRS: Final = 64
"""Pairs whose vectors stay cached in this process (least recently searched evicted)."""

VECTOR_BATCH: Final = 2000
"""Vectors fetched per script call (bounds one reply to ~3 MB at 384 dims)."""

FETCH_CHUNK: Final = 16
"""Hits re-read from Redis per round while filling the top k (expired keys are skipped)."""

SPARE_ROWS: Final = 16
"""Least room a cached matrix grows by when our own create adds a row to it."""


@dataclass
class PairCache:
    """A pair's vectors as one normalised matrix, valid while the index version is."""

    version: str
    keys: list[str]
    matrix: np.ndarray  # rows L2-normalised, float32
    reembedded: str = "0"  # the pair's re-embedding counter the vectors were read under
    _rows: np.ndarray | None = field(default=None, repr=False, compare=False)  # matrix: its head

    def append(self, key: str, unit: np.ndarray) -> None:
        """Add one normalised row. The rows live in a buffer with spare room that grows by
        half when full, so a pair's creates copy its matrix O(log n) times, not once each;
        `matrix` stays a contiguous view of the filled rows (the same values a fresh stack
        holds, so searches score alike) and earlier views keep their rows."""
        count = self.matrix.shape[0]
        rows = self._rows
        if rows is None or self.matrix.base is not rows or rows.shape[0] == count:
            rows = np.empty(
                (count + max(count // 2, SPARE_ROWS), self.matrix.shape[1]), self.matrix.dtype
            )
            rows[:count] = self.matrix
            self._rows = rows
        rows[count] = unit
        self.matrix = rows[: count + 1]
        self.keys.append(key)


class ShortTermSearch:
    """The search methods of `ShortTermStore`; the attributes below are set by its `__init__`."""

    redis: aioredis.Redis
    cache_vectors: bool
    _vectors: dict[str, np.ndarray]
    _pairs: OrderedDict[Pair, PairCache]
    _hits: AsyncScript
    _pair_vectors: AsyncScript
    _vectors_script: AsyncScript

    async def forget(self, pair: Pair, gone: Sequence[str]) -> None:
        raise NotImplementedError

    async def _members_versioned(self, pair: Pair) -> tuple[str, set[str], str]:
        raise NotImplementedError

    async def _version(self, pair: Pair) -> str:
        raise NotImplementedError

    async def nearest(
        self, pair: Pair, vector: Sequence[float] | np.ndarray, k: int = 10
    ) -> list[ShortTermHit]:
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
        hits: list[ShortTermHit] = []
        gone: list[str] = []
        start = len(chunk)
        while True:
            for i, fields in zip(chunk, decode_flats(fetched), strict=True):
                key = cache.keys[i]
                if fields is None:
                    gone.append(key)
                elif len(hits) < k:
                    cosine = float(scores[i])
                    hits.append(ShortTermHit(key, cosine, similarity_of(cosine), fields))
            if len(hits) >= k or start >= len(scores):
                break
            if start >= len(order):  # more expired entries than expected: rank them all
                order = best_first(scores, len(scores))
            chunk = [int(i) for i in order[start : start + FETCH_CHUNK]]
            start += len(chunk)
            _, fetched = await self._fetch_hits(pair, [cache.keys[i] for i in chunk])
        if gone:
            await self.forget(pair, gone)
            self._pairs.pop(pair, None)
        return hits

    async def _ranked_top(
        self, pair: Pair, unit: np.ndarray, k: int
    ) -> tuple[PairCache, np.ndarray, np.ndarray, list[int], list[Any]] | None:
        """(matrix, cosines, ranking, top k indices, their hashes), or None for no entries.

        A cached matrix is trusted when the index version read along with the hits is still
        its version (one round trip); otherwise it is refreshed and the ranking redone."""
        cached = self._pairs.get(pair)
        if cached is not None and cached.matrix.shape[1] == unit.shape[0]:
            scores, order, chunk = rank(cached, unit, k)
            version, fetched = await self._fetch_hits(pair, [cached.keys[i] for i in chunk])
            if version == cached.version:
                self._pairs.move_to_end(pair)
                return cached, scores, order, chunk, fetched
        cache = await self._matrix(pair, unit.shape[0])
        if cache is None:
            return None
        scores, order, chunk = rank(cache, unit, k)
        _, fetched = await self._fetch_hits(pair, [cache.keys[i] for i in chunk])
        return cache, scores, order, chunk, fetched

    async def _fetch_hits(self, pair: Pair, entry_keys: Sequence[str]) -> tuple[str, list[Any]]:
        """(index version, per key its flat field/value list without the embedding, empty
        when the key is gone) in one script call."""
        raw = await self._binary_script(
            self._hits, [keys.short_term_index_version(pair), *entry_keys], []
        )
        return raw[0].decode("utf-8"), raw[1:]

    async def _matrix(self, pair: Pair, dim: int) -> PairCache | None:
        """The pair's matrix rebuilt from Redis (only vectors not cached yet are fetched);
        called when there is no cache or it turned out stale."""
        cached = self._pairs.get(pair)
        block: np.ndarray | None = None
        if cached is None:  # first search of this pair: everything in one reply
            version, members, fetched, gone, other, block, reembedded = await self._fetch_pair(
                pair, dim
            )
        else:  # only the vectors this process has not seen yet
            version, members, reembedded = await self._members_versioned(pair)
            if reembedded != cached.reembedded:  # a correction: no cached vector is trusted
                for key in cached.keys:
                    self._vectors.pop(key, None)
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
        entry = PairCache(version, rows, matrix / norms, reembedded)
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
    ) -> tuple[str, set[str], dict[str, np.ndarray], list[str], list[str], np.ndarray | None, str]:
        """(version, members, vectors, missing keys, other-dimension keys, the vectors as one
        matrix in the order of `vectors`, re-embedding counter) in one script call."""
        raw = await self._binary_script(
            self._pair_vectors,
            [
                keys.short_term_index(pair),
                keys.short_term_index_version(pair),
                keys.short_term_reembedded(pair),
            ],
            [dim * DTYPE.itemsize],
        )
        version, joined, blob, lost, odd, reembedded = raw
        good = [k for k in joined.decode("utf-8").split("\n") if k]
        missing = [str(k) for k in as_list(lost)]
        other = [str(k) for k in as_list(odd)]
        found: dict[str, np.ndarray] = {}
        matrix = None
        if good:
            matrix = np.frombuffer(blob, dtype=DTYPE).reshape(len(good), dim)
            found = {key: matrix[row] for row, key in enumerate(good)}
        members = set(good) | set(missing) | set(other)
        return (
            version.decode("utf-8"),
            members,
            found,
            missing,
            other,
            matrix,
            reembedded.decode("utf-8"),
        )

    async def _fetch_vectors(
        self, wanted: Sequence[str], dim: int
    ) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
        """Vectors of `wanted` in one reply: (found, missing keys, other-dimension keys)."""
        found: dict[str, np.ndarray] = {}
        missing: list[str] = []
        other: list[str] = []
        size = dim * DTYPE.itemsize
        for start in range(0, len(wanted), VECTOR_BATCH):
            batch = list(wanted[start : start + VECTOR_BATCH])
            blob, lost, odd = await self._binary_script(self._vectors_script, batch, [size])
            lost_i = indices(lost)
            odd_i = indices(odd)
            missing += [batch[i - 1] for i in lost_i]
            other += [batch[i - 1] for i in odd_i]
            bad = set(lost_i) | set(odd_i)
            good = [key for i, key in enumerate(batch, start=1) if i not in bad]
            matrix = np.frombuffer(blob, dtype=DTYPE).reshape(len(good), dim) if good else None
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


def rank(cache: PairCache, unit: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(cosines, the best k + FETCH_CHUNK indices best first, the first k of them)."""
    # einsum: a plain single-threaded loop; BLAS threads only lose on 2 busy cores
    scores = np.einsum("ij,j->i", cache.matrix, unit, optimize=False)
    order = best_first(scores, k + FETCH_CHUNK)
    return scores, order, [int(i) for i in order[:k]]


def best_first(scores: np.ndarray, count: int) -> np.ndarray:
    """Indices of the `count` highest scores, best first (argpartition, then sort)."""
    if count >= len(scores):
        return np.argsort(-scores, kind="stable")
    top = np.argpartition(-scores, count - 1)[:count]
    return top[np.argsort(-scores[top], kind="stable")]
