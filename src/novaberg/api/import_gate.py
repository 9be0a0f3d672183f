"""At most one import per person, and `IMPORTS_AT_ONCE` per API process.

Why: an import is the heaviest request there is. Its body (up to `NOVABERG_MAX_IMPORT_BYTES`)
is held in memory, parsed in a worker thread into several times its size of objects, and
embedded batch by batch. Imports at once do not finish sooner on a machine of a few cores;
they take memory and CPU from everyone's chats. So one more is refused with 429
`import_laeuft` and `Retry-After` rather than queued holding its body and its connection:
its body is read and dropped as it arrives (nothing of it is kept), so the client, which
sends the whole body before it reads, gets the answer instead of a reset connection. Counted per API process, like the other per-user limits (README
"Limits"); the constant is not a setting because more at once buys nothing but memory.

The gate is ASGI middleware outside the request guard (api/request_guard.py): it takes the
slot before the guard reads the body and keeps it until the answer is sent. A request
without a valid token passes through: the guard answers it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from fastapi import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from novaberg.api.auth import bearer_user
from novaberg.api.errors import ErrorOut
from novaberg.api.request_guard import BodyLimit, Refusal, header, refuse_unread
from novaberg.config import Settings

IMPORTS_AT_ONCE: Final = 2
"""Imports running at once in one API process: a parse and an embedding batch each keep a
core busy, and each holds its file several times over in memory; on two cores, a third
would only slow the two and everyone's chats."""

RETRY_AFTER_SECONDS: Final = 10
"""A card or a chat export of ordinary size is imported in seconds."""

IMPORT_BUSY: Final[dict[int | str, dict[str, Any]]] = {
    429: {
        "model": ErrorOut,
        "description": "import_laeuft: an import of the caller's is still running, or as "
        "many imports as the server takes at once (see Retry-After)",
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    }
}
"""The 429 the import routes document."""


class ImportGate:
    """ASGI middleware: one import per user and `at_once` per process on `paths` (POST)."""

    def __init__(
        self,
        app: ASGIApp,
        paths: Iterable[str],
        limits: Callable[[Settings], Mapping[str, BodyLimit]],
        at_once: int = IMPORTS_AT_ONCE,
    ) -> None:
        self.app = app
        self.paths = frozenset(paths)
        self.limits = limits
        """The paths' body limits: a refused import's body is read up to them and dropped."""
        self.at_once = at_once
        self.running: set[str] = set()
        """Users whose import runs now (one each, so also the count)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (
            scope["type"] == "http" and scope["method"] == "POST" and scope["path"] in self.paths
        ):
            await self.app(scope, receive, send)
            return
        try:
            user_id = await bearer_user(scope["app"].state, header(scope, b"authorization"))
        except HTTPException:
            await self.app(scope, receive, send)  # the request guard refuses it, unread
            return
        busy = self.refusal(user_id)
        if busy is not None:
            state = scope["app"].state
            limit = self.limits(state.settings)[scope["path"]].size
            await refuse_unread(scope, receive, send, busy, limit, state.settings.body_timeout)
            return
        self.running.add(user_id)
        try:
            await self.app(scope, receive, send)
        finally:
            self.running.discard(user_id)

    def refusal(self, user_id: str) -> Refusal | None:
        """The 429 for one import more, or None if this user's may start."""
        retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        if user_id in self.running:
            return Refusal(
                429,
                "import_laeuft",
                "an import of yours is still running: one at a time per person; send this "
                "one when it has finished",
                **retry,
            )
        if len(self.running) >= self.at_once:
            return Refusal(
                429,
                "import_laeuft",
                f"{len(self.running)} imports are running, as many as the server takes at "
                "once; try again shortly",
                **retry,
            )
        return None
