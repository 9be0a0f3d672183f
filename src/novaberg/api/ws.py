"""`GET /ws?token=…[&since=SEQ][&client_id=…]`: the user's delivery stream.

Server → client messages (JSON, each with the user's `seq`): `character_stage`,
`character_response`, `turn_gescheitert`, `user_utterance`; on connect one
`verbindung` hello carrying `seq_aktuell`. With `since=SEQ` the connection
first receives what the user missed after SEQ (see `events.delivery` for the
catch-up window). A client never sends anything the server needs; the socket
is read only to notice when it closes.

A browser page may open a socket only from this server's own origin or one listed in
NOVABERG_ALLOWED_ORIGINS (else 4403): the token travels in the query, and a page
elsewhere must not be able to use one it got hold of with the person's browser. Clients
that send no `Origin` (the terminal chat, scripts) are not browsers and are let in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import redis.asyncio as aioredis
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from novaberg.api.auth import websocket_identity
from novaberg.events.delivery import (
    CLOSE_BAD_REQUEST,
    CLOSE_FOREIGN_ORIGIN,
    CLOSE_TOO_MANY,
    CLOSE_TOO_SLOW,
    CLOSE_UNAUTHORIZED,
    FOREIGN_ORIGIN_REASON,
    REVOKED_REASON,
    TOO_MANY_REASON,
    TOO_SLOW_REASON,
    Connection,
    DeliveryHub,
    TooManyConnections,
)
from novaberg.store import keys

log = logging.getLogger(__name__)

router = APIRouter()

PRESENCE_REFRESH = 5.0
"""Seconds between refreshes of a connected user's presence mark (it lives 20 s)."""


@router.websocket("/ws")
async def delivery_socket(
    websocket: WebSocket,
    token: str | None = None,
    since: str | None = None,
    client_id: str | None = None,
) -> None:
    # Accepted first, then refused with a close code: a socket closed before the
    # handshake reaches the browser as a bare 403 it cannot tell apart from an outage.
    await websocket.accept()
    allowed = websocket.app.state.settings.origins
    if not origin_allowed(websocket.headers.get("origin"), websocket.headers.get("host"), allowed):
        await websocket.close(code=CLOSE_FOREIGN_ORIGIN, reason=FOREIGN_ORIGIN_REASON)
        return
    problem = _query_problem(since, client_id)
    if problem is not None:
        await websocket.close(code=CLOSE_BAD_REQUEST, reason=problem)
        return
    user_id, digest = await websocket_identity(websocket, token)
    if user_id is None:
        await websocket.close(code=CLOSE_UNAUTHORIZED, reason="token fehlt oder ungültig")
        return
    hub = websocket.app.state.chat.hub
    try:
        # Nothing may be awaited between the token check and `attach`, which registers the
        # connection before its first await: a revocation heard in between would find no
        # socket to close (the token cache refuses lookups that a revocation overtook).
        conn = await hub.attach(
            websocket,
            user_id,
            client_id,
            None if since is None else int(since),
            token_digest=digest,
        )
    except TooManyConnections:
        await websocket.close(code=CLOSE_TOO_MANY, reason=TOO_MANY_REASON)
        return
    pump = asyncio.create_task(hub.pump(conn), name=f"ws-pump:{user_id}")
    reader = asyncio.create_task(_read_until_closed(websocket), name=f"ws-read:{user_id}")
    present = asyncio.create_task(_keep_present(hub.redis, user_id), name=f"ws-here:{user_id}")
    try:
        await asyncio.wait({pump, reader}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        hub.detach(conn)
        for task in (pump, reader, present):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await _forget_presence(hub, user_id)
        await _close(websocket, conn)


async def _forget_presence(hub: DeliveryHub, user_id: str) -> None:
    """The user's last socket here closed: drop the presence mark now rather than in 20 s,
    so what Nova says next goes to the person's linked chats (docs/behaviour/reach.md).
    A socket of theirs on another API process marks them again within `PRESENCE_REFRESH`."""
    if hub.connection_count(user_id):
        return
    with contextlib.suppress(Exception):
        await hub.redis.delete(keys.presence(user_id))


async def _close(websocket: WebSocket, conn: Connection) -> None:
    """Close normally, with 4401 when the token was revoked, or with 4408 when the peer fell
    behind: the close frame is written once the peer reads what is already on its way (a
    peer that never reads again is ended by the keepalive ping)."""
    with contextlib.suppress(Exception):
        if conn.revoked:
            await websocket.close(code=CLOSE_UNAUTHORIZED, reason=REVOKED_REASON)
        elif conn.overflowed:
            await websocket.close(code=CLOSE_TOO_SLOW, reason=TOO_SLOW_REASON)
        else:
            await websocket.close()


def origin_allowed(origin: str | None, host: str | None, allowed: frozenset[str]) -> bool:
    """No `Origin` (not a browser), this server's own (the origin's host[:port] is the
    request's `Host`; the scheme is not compared, since a TLS proxy in front speaks https
    to the browser and http to us), or one of NOVABERG_ALLOWED_ORIGINS. `null` (a sandboxed
    frame, a file) is nobody's own."""
    if origin is None:
        return True
    origin = origin.strip().lower().rstrip("/")
    if origin in allowed:
        return True
    _, scheme_end, netloc = origin.partition("://")
    return bool(scheme_end and host) and netloc == (host or "").strip().lower()


def _query_problem(since: str | None, client_id: str | None) -> str | None:
    if since is not None and not (since.isascii() and since.isdigit() and len(since) <= 18):
        return "since: eine ganze Zahl ≥ 0"
    if client_id is not None and not 1 <= len(client_id) <= 64:
        return "client_id: 1-64 Zeichen"
    return None


async def _keep_present(redis: aioredis.Redis, user_id: str) -> None:
    """While the socket is open, mark the user as connected (`verbunden:{u}`), so impulse
    delivery — in whichever worker — knows someone would hear Nova."""
    while True:
        try:
            await redis.set(keys.presence(user_id), "1", ex=keys.PRESENCE_TTL)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("presence mark of %s not refreshed", user_id, exc_info=True)
        await asyncio.sleep(PRESENCE_REFRESH)


async def _read_until_closed(websocket: WebSocket) -> None:
    with contextlib.suppress(WebSocketDisconnect):
        while True:
            message = await websocket.receive()
            if message.get("type") == "websocket.disconnect":
                return
