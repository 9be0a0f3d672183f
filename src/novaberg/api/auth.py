"""Token authentication for every HTTP and WebSocket call.

HTTP: `Authorization: Bearer <token>`. WebSocket: `?token=<token>` (browsers
cannot set headers on a WebSocket) or the same header. Lookups are cached
in-process for a short time so the intake does not pay a database round trip
per request; a revoked token stops working within `TOKEN_CACHE_SECONDS`.

Use `user_id: str = Depends(current_user)` in any router.
"""

from __future__ import annotations

import time
from collections import OrderedDict
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
    """token hash -> (user_id | None, expiry), least recently used dropped first."""

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
        user_id = await user_for_token(self.pool, token)
        self._entries[digest] = (user_id, now + (self.ttl if user_id else self.unknown_ttl))
        self._entries.move_to_end(digest)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return user_id, digest

    def forget(self) -> None:
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


async def websocket_user(websocket: WebSocket, token: str | None) -> str | None:
    """The user of a WebSocket handshake (`?token=` or bearer header), else None."""
    token = token or _bearer(websocket.headers.get("authorization"))
    if not token:
        return None
    cache = getattr(websocket.app.state, "token_cache", None)
    if cache is None:
        return None
    return await cache.user_for(token)
