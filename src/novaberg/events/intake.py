"""The intake: validate, stamp, enqueue, answer — nothing else (docs/behaviour/events.md#intake).

No model call, no graph, no waiting and no database round trip per request:
three single-slot Redis scripts in order (mark the pair active; RPUSH the utterance and
refresh the queue TTL; put the pair on the ready list), shared by the requests that arrive
while a write is in flight.
The characters each user may talk to are cached in-process, per user. The stored
entry has the shape of `model.QueuedUtterance` (built directly here: this is the hot
path; the request itself is read by api/fast_chat.py ahead of the framework).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field

from pydantic_core import to_json

from novaberg.events import intake_lua as lua
from novaberg.events.model import MAX_PROMPT_BYTES, new_id
from novaberg.events.resp import ScriptClient, script_client
from novaberg.pair import Pair
from novaberg.store import keys

log = logging.getLogger(__name__)

CHARACTER_CACHE_SECONDS = 30.0
"""How long a user's set of known characters is trusted before it is re-read (a character
deleted in another process may be reachable here this long)."""

UNKNOWN_RECHECK_SECONDS = 1.0
"""An unknown id re-reads the user's set at most this often (new characters appear quickly,
a flood of bad ids does not reach the database)."""

CHARACTER_CACHE_USERS = 10_000
"""Users whose sets are held at once; the one asked about least recently is dropped first
(a set is a few ids: the cache stays small however many users come and go)."""

MAX_CLIENT_ID = 64

MAX_BATCH = 500
"""Most utterances written by one script call (Lua's unpack has a stack limit)."""

WRITE_TIMEOUT = 5.0
"""Seconds one enqueue may take before the request is answered 503 (nothing accepted)."""


class IntakeError(ValueError):
    """Bad input: `status` is the HTTP status, `code` a stable machine name."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Accepted:
    message_id: str
    received_at: float


@dataclass
class _UserCharacters:
    ids: frozenset[str] = frozenset()
    loaded_at: float = float("-inf")
    added: frozenset[str] = frozenset()
    """Created in this process since the last read began: kept even if that read missed them."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class CharacterCache:
    """The character ids each user may talk to (their own and the shared ones), re-read
    from the store when stale; at most `max_users` users are held (least recently asked
    dropped first). `load(user_id)` reads one user's ids."""

    def __init__(
        self,
        load: Callable[[str], Awaitable[Collection[str]]],
        *,
        max_users: int = CHARACTER_CACHE_USERS,
    ) -> None:
        self._load = load
        self._max_users = max_users
        self._users: OrderedDict[str, _UserCharacters] = OrderedDict()

    def _entry(self, user_id: str) -> _UserCharacters:
        entry = self._users.get(user_id)
        if entry is None:
            entry = self._users[user_id] = _UserCharacters()
            if len(self._users) > self._max_users:
                self._users.popitem(last=False)
        else:
            self._users.move_to_end(user_id)
        return entry

    async def _refresh(self, user_id: str, entry: _UserCharacters) -> None:
        seen = entry.loaded_at
        async with entry.lock:
            if entry.loaded_at != seen:  # re-read while we waited: share it, no second query
                return
            entry.added = frozenset()
            loaded = frozenset(await self._load(user_id))
            entry.ids = loaded | entry.added
            entry.loaded_at = time.monotonic()

    async def known(self, user_id: str, character_id: str) -> bool:
        entry = self._entry(user_id)
        age = time.monotonic() - entry.loaded_at
        stale = age > CHARACTER_CACHE_SECONDS
        if stale or (character_id not in entry.ids and age > UNKNOWN_RECHECK_SECONDS):
            await self._refresh(user_id, entry)
        return character_id in entry.ids

    def add(self, user_id: str, character_id: str) -> None:
        """A character the user just created here: usable at once, without a re-read."""
        entry = self._users.get(user_id)
        if entry is not None:
            entry.ids |= {character_id}
            entry.added |= {character_id}

    def discard(self, user_id: str, character_id: str) -> None:
        """A character the user just deleted here: refused at once in this process."""
        entry = self._users.get(user_id)
        if entry is not None:
            entry.ids -= {character_id}
            entry.added -= {character_id}


def pair_member(pair: Pair) -> str:
    """Member of the active-pairs set; user ids never contain ':' (store.users)."""
    return str(pair)


def pair_from_member(member: str) -> Pair:
    user_id, _, character_id = member.partition(":")
    return Pair(user_id, character_id)


def check_text(text: str) -> str:
    """Trimmed text, or IntakeError naming the problem."""
    stripped = text.strip()
    if not stripped:
        raise IntakeError(422, "text_leer", "text is empty after trimming whitespace")
    try:
        size = len(stripped.encode("utf-8"))
    except UnicodeEncodeError:
        raise IntakeError(400, "utf8_ungueltig", "text is not valid UTF-8") from None
    if size > MAX_PROMPT_BYTES:
        raise IntakeError(
            413, "text_zu_lang", f"text is {size} bytes; at most {MAX_PROMPT_BYTES} are accepted"
        )
    if "\x00" in stripped:  # memory and logs live in PostgreSQL, which cannot store it
        raise IntakeError(422, "text_ungueltig", "text contains NUL (U+0000)")
    return stripped


ACTIVE_PAIRS = keys.active_pairs()
READY_PAIRS = keys.ready_pairs()


class _GroupCommit:
    """Writes queued utterances in as few Redis round trips as possible, without waiting.

    An idle writer stores a lone utterance inline, in the request's own task (no task
    hand-off on the common path). Requests arriving while a write is in flight wait and
    are written together by one drain task (one script call, one reply), so under load
    the Redis cost per message shrinks instead of queueing up. Each request is answered
    only after its own utterance is stored; each write is bounded by the client's timeout
    (`intake_redis`).
    """

    def __init__(self, redis: ScriptClient) -> None:
        self._redis = redis
        self._pending: list[tuple[str, bytes, str, asyncio.Future[None]]] = []
        self._writing = False

    async def write(self, queue: str, entry: bytes, member: str) -> None:
        if not self._writing:
            self._writing = True
            try:
                await self._store([(queue, entry, member)])
            finally:
                if self._pending:  # arrived meanwhile: the drain task writes them
                    asyncio.get_running_loop().create_task(self._drain())
                else:
                    self._writing = False
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((queue, entry, member, future))
        await future

    async def _store(self, items: list[tuple[str, bytes, str]]) -> None:
        """Activate the pairs, queue the utterances (one script call per user: one hash
        slot each), then put the pairs on the ready list."""
        grouped: dict[str, dict[str, list[bytes]]] = {}
        members: dict[str, None] = {}
        for queue, entry, member in items:
            user_id = member.partition(":")[0]
            grouped.setdefault(user_id, {}).setdefault(queue, []).append(entry)
            members[member] = None
        await self._redis.run(lua.ACTIVATE, (ACTIVE_PAIRS,), list(members))
        for queues in grouped.values():
            args: list[str | bytes | int] = [keys.QUEUE_TTL]
            for entries in queues.values():
                args += [len(entries), *entries]
            await self._redis.run(lua.ENQUEUE, list(queues), args)
        await self._redis.run(lua.WAKE, (READY_PAIRS,), list(members))

    async def _drain(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
                try:
                    await self._store([(queue, entry, member) for queue, entry, member, _ in batch])
                except Exception as exc:
                    for *_, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for *_, future in batch:
                    if not future.done():
                        future.set_result(None)
        finally:
            self._writing = False


def intake_redis(redis_url: str, *, cluster: bool = False) -> ScriptClient:
    """The intake's own Redis connection: a minimal script client (events/resp.py), since
    redis-py's per-call overhead was the largest CPU cost of a request; on a Redis Cluster
    redis-py's cluster client, confirming each write on a replica (events/cluster_scripts.py).
    Each call fails with TimeoutError after `WRITE_TIMEOUT` seconds without a reply."""
    return script_client(redis_url, timeout=WRITE_TIMEOUT, cluster=cluster)


class Intake:
    def __init__(self, redis: ScriptClient, characters: CharacterCache) -> None:
        self.redis = redis
        self.characters = characters
        self._writer = _GroupCommit(redis)

    async def accept(
        self,
        user_id: str,
        character_id: str,
        text: str,
        client_id: str | None = None,
        *,
        message_id: str | None = None,
    ) -> Accepted:
        """Store the utterance in `prompt_queue:{u}:{c}`; raise IntakeError on bad input.
        Redis errors propagate (the caller answers 503: nothing was accepted).
        `message_id`: an id the caller made (`new_id()`) and noted before, else a new one."""
        clean = check_text(text)
        if client_id is not None and (not client_id or len(client_id) > MAX_CLIENT_ID):
            raise IntakeError(422, "client_id_ungueltig", "client_id must be 1-64 characters")
        if not await self.characters.known(user_id, character_id):
            raise IntakeError(404, "charakter_unbekannt", f"unknown character {character_id!r}")
        pair = Pair(user_id, character_id)
        message_id = message_id or new_id()
        received_at = time.time()
        entry = to_json(
            {
                "nachrichten_id": message_id,
                "prompt": clean,
                "empfangen_am": received_at,
                "client_id": client_id,
            }
        )
        await self._writer.write(keys.prompt_queue(pair), entry, pair_member(pair))
        return Accepted(message_id, received_at)
