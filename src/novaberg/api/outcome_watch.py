"""Waiting for one utterance's outcome inside an API process.

A caller that must answer in the same HTTP request (the OpenAI-compatible door) attaches
to the user's delivery stream like a WebSocket would, before it queues the utterance, so
no outcome can slip past: every message published for the user from then on reaches its
inbox. It reads until the `character_response` or `turn_gescheitert` naming its
`nachrichten_id` arrives — exactly one of the two ever does
(docs/behaviour/events.md#outcomes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from novaberg.events.delivery import Connection, DeliveryHub
from novaberg.wire import FIELD_MESSAGE_IDS, MSG_FAILED, MSG_RESPONSE, MSG_STAGE

OUTCOME_TYPES = frozenset({MSG_RESPONSE, MSG_FAILED})


class WatchLost(Exception):
    """The delivery stream of the watch ended before the outcome arrived: the server shuts
    down, or (`revoked`) the token the watch was opened with was revoked meanwhile."""

    def __init__(self, reason: str, *, revoked: bool = False) -> None:
        super().__init__(reason)
        self.revoked = revoked


class _Inbox:
    """A socket of the hub that keeps what it is sent (it never blocks the hub)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.revoked = False

    async def send_text(self, data: str) -> None:
        self.queue.put_nowait(data)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        return None

    def ended(self, conn: Connection) -> None:
        """The hub stopped feeding this inbox (server shutdown, or its token revoked): wake
        the reader."""
        self.revoked = conn.revoked
        self.queue.put_nowait(None)


@dataclass(frozen=True)
class Seen:
    """One message of the user's stream: the outcome of the watched id, or something else
    (a stage of some turn, another turn's answer) the caller may show or ignore."""

    message: dict[str, Any]
    is_outcome: bool


class Watch:
    """The user's delivery stream as seen from one request."""

    def __init__(self, inbox: _Inbox) -> None:
        self._inbox = inbox

    async def next(self, message_id: str, timeout: float) -> Seen | None:
        """The next message of interest within `timeout` seconds (None when none came):
        the outcome naming `message_id`, or a `character_stage`."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            raw = await self._get(remaining)
            if raw is None:
                return None
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            kind = message.get("typ")
            if kind in OUTCOME_TYPES and message_id in (message.get(FIELD_MESSAGE_IDS) or []):
                return Seen(message, True)
            if kind == MSG_STAGE:
                return Seen(message, False)

    async def _get(self, timeout: float) -> str | None:
        try:
            raw = await asyncio.wait_for(self._inbox.queue.get(), timeout)
        except TimeoutError:
            return None
        if raw is None:
            if self._inbox.revoked:
                raise WatchLost("the token was revoked", revoked=True)
            raise WatchLost("the delivery stream ended")
        return raw


@asynccontextmanager
async def watch_user(
    hub: DeliveryHub, user_id: str, token_digest: str = ""
) -> AsyncIterator[Watch]:
    """Attach to the user's stream for the duration of the block (it counts as one of the
    user's connections: `TooManyConnections` when none is left). `token_digest`: the token
    the caller came with; revoking it ends the watch (`WatchLost.revoked`)."""
    inbox = _Inbox()
    conn: Connection = await hub.attach(inbox, user_id, None, None, token_digest=token_digest)
    pump = asyncio.create_task(hub.pump(conn), name=f"outcome-watch:{user_id}")
    pump.add_done_callback(lambda _pump: inbox.ended(conn))
    try:
        yield Watch(inbox)
    finally:
        hub.detach(conn)
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await pump
