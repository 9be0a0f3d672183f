"""Token authentication for every HTTP and WebSocket call.

HTTP: `Authorization: Bearer <token>`. WebSocket: `?token=<token>` (browsers
cannot set headers on a WebSocket) or the same header. Lookups are cached
in-process for a short time so the intake does not pay a database round trip
per request. A revocation announced on `token_widerrufen` (api/revocation.py) drops the
token from the cache at once; one that was not announced (Redis unreachable) takes effect
when the cache entry expires, within `TOKEN_CACHE_SECONDS`.

Use `user_id: str = Depends(current_user)` in any router.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Annotated

from fastapi import Depends, HTTPException, Request, WebSocket
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from psycopg_pool import AsyncConnectionPool

from novaberg.store.users import hash_token, user_for_token

TOKEN_CACHE_SECONDS = 30.0
"""How long a verified token is trusted without asking the database again."""

UNKNOWN_TOKEN_CACHE_SECONDS = 2.0
"""How long a rejected token is remembered (keeps a flood of bad tokens off the DB)."""

TOKEN_CACHE_SIZE = 10_000

MAX_TOKEN_LENGTH = 256


class TokenCache:
    """token hash -> (user_id | None, expiry), least recently used dropped first.

    Revocations race with lookups: a database answer that was read before a token was
    deleted may arrive after the revocation was announced here. Every revocation (and every
    `forget`) therefore starts a new epoch; a lookup that began in an older epoch is not
    cached, and answers "unknown" if its token was revoked since it began."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        *,
        ttl: float = TOKEN_CACHE_SECONDS,
        unknown_ttl: float = UNKNOWN_TOKEN_CACHE_SECONDS,
        size: int = TOKEN_CACHE_SIZE,
    ) -> None:
        self.pool = pool
        self.ttl = ttl
        self.unknown_ttl = unknown_ttl
        self.size = size
        self._entries: OrderedDict[str, tuple[str | None, float]] = OrderedDict()
        self._epoch = 0
        self._revoked: OrderedDict[str, int] = OrderedDict()
        """digest -> the epoch its revocation began (bounded like the cache: only lookups
        in flight when it arrived need it)."""

    async def user_for(self, token: str) -> str | None:
        return (await self.identify(token))[0]

    async def identify(self, token: str) -> tuple[str | None, str]:
        """(owner or None, the token's digest: a key that is not the secret itself)."""
        if not token or len(token) > MAX_TOKEN_LENGTH:
            return None, ""
        digest = hash_token(token)
        now = time.monotonic()
        hit = self._entries.get(digest)
        if hit is not None and hit[1] > now:
            self._entries.move_to_end(digest)
            return hit[0], digest
        epoch = self._epoch
        user_id = await user_for_token(self.pool, token)
        if self._epoch != epoch:  # the answer may predate a revocation: never cached
            if self._revoked.get(digest, -1) > epoch:
                return None, digest
            return user_id, digest
        self._entries[digest] = (user_id, now + (self.ttl if user_id else self.unknown_ttl))
        self._entries.move_to_end(digest)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return user_id, digest

    def revoke(self, digests: Iterable[str]) -> None:
        """These tokens were revoked: forget them, and refuse them to lookups in flight."""
        self._epoch += 1
        for digest in digests:
            self._entries.pop(digest, None)
            self._revoked[digest] = self._epoch
            self._revoked.move_to_end(digest)
        while len(self._revoked) > self.size:
            self._revoked.popitem(last=False)

    def forget(self) -> None:
        """Trust nothing cached (revocations may have been missed); lookups in flight are
        not cached either."""
        self._epoch += 1
        self._entries.clear()


def _cache(app_state: object) -> TokenCache:
    cache = getattr(app_state, "token_cache", None)
    if cache is None:
        raise HTTPException(503, detail={"fehler": "nicht_bereit", "detail": "auth not ready"})
    return cache


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


BEARER = HTTPBearer(scheme_name="bearer", auto_error=False, description="An API token.")
"""Declares the `bearer` security scheme in the OpenAPI (the check itself is ours: 401 with
a `fehler` code, also for a malformed header)."""


async def current_user(
    request: Request, _declared: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]
) -> str:
    """FastAPI dependency: the user owning the request's bearer token, else 401."""
    return await bearer_user(request.app.state, request.headers.get("authorization"))


async def current_identity(
    request: Request, _declared: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]
) -> tuple[str, str]:
    """FastAPI dependency: (user, digest of the token this request carries), else 401."""
    return await bearer_identity(request.app.state, request.headers.get("authorization"))


async def bearer_user(app_state: object, authorization: str | None) -> str:
    """The user owning the bearer token in an `Authorization` header value; HTTPException
    401 (no or unknown token) or 503 (auth not ready). Shared by the FastAPI dependency,
    the request guard (api/request_guard.py) and the intake (api/fast_chat.py)."""
    return (await bearer_identity(app_state, authorization))[0]


async def bearer_identity(app_state: object, authorization: str | None) -> tuple[str, str]:
    """(user, token digest) of a bearer header value - the digest keys per-token limits;
    raises as `bearer_user`."""
    token = _bearer(authorization)
    if token is None:
        raise HTTPException(
            401,
            detail={"fehler": "token_fehlt", "detail": "send Authorization: Bearer <token>"},
            headers={"WWW-Authenticate": "Bearer"},
        )
    user_id, digest = await _cache(app_state).identify(token)
    if user_id is None:
        raise HTTPException(
            401,
            detail={"fehler": "token_ungueltig", "detail": "unknown or revoked token"},
            headers={"WWW-Authenticate": "Bearer"},
        )
    return user_id, digest


async def websocket_identity(websocket: WebSocket, token: str | None) -> tuple[str | None, str]:
    """(user or None, token digest) of a WebSocket handshake (`?token=` or bearer header);
    the digest lets the socket be closed when its token is revoked."""
    token = token or _bearer(websocket.headers.get("authorization"))
    if not token:
        return None, ""
    cache = getattr(websocket.app.state, "token_cache", None)
    if cache is None:
        return None, ""
    return await cache.identify(token)
