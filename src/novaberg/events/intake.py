"""The intake: validate, stamp, enqueue, answer — nothing else (seed 000 §3.0, DESIGN §7).

No model call, no graph, no waiting and no database round trip per request:
one Redis transaction (RPUSH the utterance, refresh the queue TTL, mark the
pair active). Known characters are cached in-process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import redis.asyncio as aioredis

from novaberg.events.model import MAX_PROMPT_BYTES, QueuedUtterance, new_id
from novaberg.store import keys

log = logging.getLogger(__name__)

CHARACTER_CACHE_SECONDS = 30.0
"""How long the set of known characters is trusted before it is re-read."""

UNKNOWN_RECHECK_SECONDS = 1.0
"""An unknown id re-reads the set at most this often (new characters appear quickly,
a flood of bad ids does not reach the database)."""

MAX_CLIENT_ID = 64


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


class CharacterCache:
    """Known character ids, re-read from the store when stale."""

    def __init__(self, load: Callable[[], Awaitable[set[str]]]) -> None:
        self._load = load
        self._ids: set[str] = set()
        self._loaded_at = float("-inf")
        self._lock = asyncio.Lock()

    async def _refresh(self) -> None:
        async with self._lock:
            self._ids = await self._load()
            self._loaded_at = time.monotonic()

    async def known(self, character_id: str) -> bool:
        age = time.monotonic() - self._loaded_at
        stale = age > CHARACTER_CACHE_SECONDS
        if stale or (character_id not in self._ids and age > UNKNOWN_RECHECK_SECONDS):
            await self._refresh()
        return character_id in self._ids


def pair_member(pair: keys.Pair) -> str:
    """Member of the active-pairs set; user ids never contain ':' (store.users)."""
    return str(pair)


def pair_from_member(member: str) -> keys.Pair:
    user_id, _, character_id = member.partition(":")
    return keys.Pair(user_id, character_id)


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
    return stripped


class Intake:
    def __init__(self, redis: aioredis.Redis, characters: CharacterCache) -> None:
        self.redis = redis
        self.characters = characters

    async def accept(
        self, user_id: str, character_id: str, text: str, client_id: str | None = None
    ) -> Accepted:
        clean = check_text(text)
        if client_id is not None and (not client_id or len(client_id) > MAX_CLIENT_ID):
            raise IntakeError(422, "client_id_ungueltig", "client_id must be 1-64 characters")
        if not await self.characters.known(character_id):
            raise IntakeError(404, "charakter_unbekannt", f"unknown character {character_id!r}")
        pair = keys.Pair(user_id, character_id)
        entry = QueuedUtterance(
            nachrichten_id=new_id(), prompt=clean, empfangen_am=time.time(), client_id=client_id
        )
        queue = keys.prompt_queue(pair)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(queue, entry.wire())
            pipe.expire(queue, keys.QUEUE_TTL)
            pipe.sadd(keys.active_pairs(), pair_member(pair))
            await pipe.execute()
        return Accepted(entry.message_id, entry.received_at)
