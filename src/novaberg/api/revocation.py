"""Revoked tokens stop working at once, in every API process
(docs/behaviour/events.md#revoked-tokens).

Whoever revokes (`DELETE /tokens/{id}`, `novaberg user revoke`) deletes the rows, then
announces the digests on `token_widerrufen` (store/token_revocation.py). In each API
process the delivery hub hears the announcement, closes the token's sockets with 4401
and tells `RevocationWatch`, which drops the digests from the token cache: the next
request with the token asks the database and is refused.

A process whose subscription was lost may have missed announcements. When it listens
again it trusts nothing cached, and asks the database which of its open sockets' tokens
still exist (retrying while the database is away); the others are closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Collection

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from redis.exceptions import RedisError

from novaberg.api.auth import TokenCache
from novaberg.events.delivery import DeliveryHub
from novaberg.store.token_revocation import announce
from novaberg.store.users import live_digests

log = logging.getLogger(__name__)

RECHECK_DELAYS = (0.0, 1.0, 2.0, 5.0, 10.0, 30.0)
"""Pauses before each attempt to re-check the open sockets' tokens after a reconnect; the
last one repeats until the database answers."""


class RevocationWatch:
    """Per API process: the token cache's side of a revocation, and the re-check after a
    lost subscription (a `events.delivery.RevocationListener`)."""

    def __init__(self, tokens: TokenCache, hub: DeliveryHub, pool: AsyncConnectionPool) -> None:
        self.tokens = tokens
        self.hub = hub
        self.pool = pool
        self._recheck: asyncio.Task[None] | None = None

    def revoked(self, digests: list[str]) -> None:
        self.tokens.revoke(digests)

    def resubscribed(self) -> None:
        self.tokens.forget()
        if self._recheck is not None:
            self._recheck.cancel()
        self._recheck = asyncio.create_task(self._check_sockets(), name="token-recheck")

    async def _check_sockets(self) -> None:
        for attempt in itertools.count():
            await asyncio.sleep(RECHECK_DELAYS[min(attempt, len(RECHECK_DELAYS) - 1)])
            open_tokens = self.hub.token_digests()
            try:
                live = await live_digests(self.pool, open_tokens)
            except Exception as exc:
                log.warning("open sockets' tokens not re-checked (%s); trying again", exc)
                continue
            gone = open_tokens - live
            if gone:
                self.tokens.revoke(gone)
                self.hub.close_tokens(gone)
            return

    async def stop(self) -> None:
        if self._recheck is not None:
            self._recheck.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._recheck
            self._recheck = None


async def revoke_here_and_everywhere(
    tokens: TokenCache, hub: DeliveryHub, redis: aioredis.Redis, digests: Collection[str]
) -> bool:
    """After the rows are deleted: this process forgets the tokens and closes their sockets
    before it answers, then every process is told. False if the announcement failed (the
    other processes refuse the tokens once their cache entries expire)."""
    if not digests:
        return True
    tokens.revoke(digests)
    hub.close_tokens(digests)
    try:
        await announce(redis, digests)
    except (RedisError, OSError, TimeoutError) as exc:
        log.warning(
            "revocation of %d token(s) not announced (%s): other API processes refuse "
            "them within their token cache's lifetime",
            len(digests),
            exc,
        )
        return False
    return True
