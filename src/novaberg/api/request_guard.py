"""What every request body to a FastAPI route passes before the framework reads it
(`POST /chat` has the same checks on its own fast path, api/fast_chat.py):

- **auth before the body**: a write to an authenticated route without a valid token is
  answered 401 before a byte of its body is read, and the connection is closed;
- **size**: a declared `Content-Length` over `MAX_REQUEST_BYTES` (or the larger limit of an
  upload path, a setting the refusal names) is refused at once, a streamed body as soon as
  it passes the limit (413);
- **time**: the whole body must arrive within `Settings.body_timeout` (408), so a client
  trickling a partial body cannot hold a connection open (slowloris);
- **rate**: right after the token, before the size: a bucket per API token
  (`NOVABERG_WRITE_RATE`, `NOVABERG_WRITE_BURST`; per API process). A token past it gets 429
  `zu_viele_anfragen` with `Retry-After`, its body dropped as it arrives (read, never kept,
  so the client reads the answer rather than a reset connection), so one user's flood of
  writes costs the others nothing. The OpenAI door's completions take from the chat bucket instead
  (api/chat.py), as `POST /chat` does;
- **text**: a body that is not UTF-8, or whose JSON carries a lone UTF-16 surrogate
  (`"\\ud800"`, valid JSON syntax but no character), is a 400 `utf8_ungueltig` - the
  framework would hand such a string to validation, echo it in a 422 it cannot encode, or
  pass it to PostgreSQL, which refuses it (a 500 either way). JSON nested deeper than
  `bounded_json.MAX_DEPTH` is a 400 `zu_tief`, checked before anything parses it (the
  parser, and the surrogate check after it, recurse once per level). A large body is
  checked in a worker thread, off the event loop. Paths that take a file (a character card
  PNG) are exempt, and paths whose body may be JSON lines (a chat export) are checked only
  as UTF-8: their route judges each line, a broken one being skipped, not the file refused.

Errors have the shape of the routes' own: `{"detail": {"fehler": code, "detail": text}}`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from fastapi import HTTPException
from starlette.responses import JSONResponse
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from novaberg import bounded_json
from novaberg.api.auth import bearer_identity
from novaberg.api.error_sentences import with_sentence
from novaberg.api.rate_limit import RateLimiter, retry_after_header

MAX_REQUEST_BYTES = 1_048_576
"""The largest legitimate body (a note of 20,000 characters) is far below this."""

THREAD_CHECK_BYTES: Final = 128 * 1024
"""A body larger than this is checked as text in a worker thread: the checks are C passes
over the bytes, a few milliseconds per 128 KiB at worst, but an upload is megabytes."""

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A `\\uD800`-`\\uDFFF` escape: only then can the parsed JSON hold a lone surrogate."""

CLOSE = (b"connection", b"close")

CHAT_BUCKET_PATHS = frozenset({"/v1/chat/completions"})
"""Writes limited by the chat bucket instead of the write bucket: a completion queues a chat
message (`POST /chat` itself never reaches this guard)."""


class Refusal(Exception):
    def __init__(self, status: int, code: str, detail: str, **headers: str) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.headers = headers


@dataclass(frozen=True, slots=True)
class BodyLimit:
    """The largest body of a path, and the setting that chose it (named in the refusal)."""

    size: int
    setting: str = ""

    def refusal(self, actual: int | None = None) -> Refusal:
        figure = f"has {actual:,} bytes" if actual is not None else "grew past the limit"
        named = f" ({self.setting})" if self.setting else ""
        return Refusal(
            413, "zu_gross", f"the body {figure}, over the limit of {self.size:,} bytes{named}"
        )


DEFAULT_LIMIT: Final = BodyLimit(MAX_REQUEST_BYTES)


def lone_surrogate(body: bytes) -> bool:
    """True if the JSON body holds a string with an unpaired surrogate (keys included)."""
    if not SURROGATE_ESCAPE.search(body):
        return False
    try:
        parsed = bounded_json.loads(body)  # so the walk below is no deeper than its limit
    except ValueError:
        return False  # not JSON, or too deep: `check_text` refuses that first
    return not all(bounded_json.is_utf8(text) for text in bounded_json.strings(parsed))


def check_text(body: bytes, json_lines: bool = False) -> None:
    """Refusal 400 `utf8_ungueltig` for a body that is no UTF-8 text, 400 `zu_tief` for JSON
    nested too deep. `json_lines`: the body may be JSONL, each line judged by its route
    (unclosed brackets of broken lines would add up here), so only UTF-8 is checked."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        raise Refusal(400, "utf8_ungueltig", "the body is not valid UTF-8") from None
    if json_lines:
        return
    try:
        bounded_json.check_depth(body)
    except bounded_json.TooDeep as exc:
        raise Refusal(400, "zu_tief", str(exc)) from None
    if lone_surrogate(body):
        raise Refusal(
            400, "utf8_ungueltig", "a JSON string holds an unpaired surrogate (not UTF-8)"
        )


async def read_body(
    receive: Receive, limit: int, timeout: float, setting: str = ""
) -> bytes | None:
    """The whole body within `timeout` seconds and `limit` bytes, else a Refusal (408/413;
    `setting`: the one that chose the limit); None if the client left first."""
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):  # a timer, no task: this runs on the intake path
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise BodyLimit(limit, setting).refusal()
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
    except TimeoutError:
        raise Refusal(408, "zeitueberschreitung", f"the body took over {timeout:g} s") from None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def declared_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() and len(value) <= 18 else None  # ASCII
    return None


def header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope["headers"]:
        if name == wanted:
            return str(value.decode("latin-1"))
    return None


class RequestGuard:
    """ASGI middleware for the FastAPI routes (see the module docstring). `limits`: body
    limits of upload paths; `binary`: paths whose body need not be text; `json_lines`: paths
    whose body may be JSON lines; `own_auth`: paths that check their caller themselves."""

    def __init__(
        self,
        app: ASGIApp,
        limits: Mapping[str, BodyLimit] | None = None,
        binary: frozenset[str] = frozenset(),
        json_lines: frozenset[str] = frozenset(),
        own_auth: frozenset[str] = frozenset(),
    ) -> None:
        self.app = app
        self.limits = dict(limits or {})
        self.binary = binary
        self.json_lines = json_lines
        self.own_auth = own_auth
        """Paths that check their caller themselves before reading the body (Telegram's
        webhook: its secret header); they pass unguarded."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        app = scope["app"]
        if scope.get("path") in self.own_auth or not _routed(app, scope):
            # 404/405 come from the framework, unread; own_auth paths check themselves
            await self.app(scope, receive, send)
            return
        try:
            _user, token_key = await bearer_identity(app.state, header(scope, b"authorization"))
        except HTTPException as exc:
            detail = exc.detail if isinstance(exc.detail, dict) else {"detail": str(exc.detail)}
            await _answer(send, exc.status_code, detail, dict(exc.headers or {}))
            return
        path = scope.get("path", "")
        limit = self.limits.get(path, DEFAULT_LIMIT)
        if path not in CHAT_BUCKET_PATHS:
            limiter = write_limiter(app.state)
            wait = limiter.retry_after(token_key)
            if wait:
                too_many = Refusal(
                    429, **_too_many(limiter), **{"Retry-After": retry_after_header(wait)}
                )
                timeout = app.state.settings.body_timeout
                await refuse_unread(scope, receive, send, too_many, limit.size, timeout)
                return
        try:
            length = declared_length(scope)
            if length is not None and length > limit.size:
                raise limit.refusal(length)
            timeout = app.state.settings.body_timeout
            body = await read_body(receive, limit.size, timeout, limit.setting)
            if body is None:
                return
            if path not in self.binary and len(body) > THREAD_CHECK_BYTES:
                await asyncio.to_thread(check_text, body, path in self.json_lines)
            elif path not in self.binary:
                check_text(body, path in self.json_lines)
        except Refusal as refusal:
            await refuse(send, refusal)
            return
        await self.app(scope, _replay(body, receive), send)


def write_limiter(app_state: Any) -> RateLimiter:
    """The app's bucket of writes per token, built from its settings at the first write
    (a test may set `app.state.write_limiter` first)."""
    limiter: RateLimiter | None = getattr(app_state, "write_limiter", None)
    if limiter is None:
        settings = app_state.settings
        limiter = RateLimiter(settings.write_rate, settings.write_burst)
        app_state.write_limiter = limiter
    return limiter


def _too_many(limiter: RateLimiter) -> dict[str, str]:
    return {
        "code": "zu_viele_anfragen",
        "detail": f"more than {limiter.burst:g} writes at once or {limiter.rate:g} per second; "
        "nothing was done",
    }


def _routed(app: Any, scope: Scope) -> bool:
    """Some route takes this path and method (else the framework answers 404 or 405)."""
    return any(route.matches(scope)[0] is Match.FULL for route in app.router.routes)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: only the disconnect is left

    return replay


async def _answer(
    send: Send, status: int, detail: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    """Refuse and close: the unread rest of the body must not be taken as the next request."""
    response = JSONResponse({"detail": with_sentence(detail)}, status, headers={**(headers or {})})
    response.raw_headers.append(CLOSE)
    await response({"type": "http", "method": "POST"}, _no_receive, send)


async def refuse(send: Send, refusal: Refusal) -> None:
    """Answer a refusal before the body is read, and close the connection."""
    await _answer(
        send, refusal.status, {"fehler": refusal.code, "detail": refusal.detail}, refusal.headers
    )


async def refuse_unread(
    scope: Scope, receive: Receive, send: Send, refusal: Refusal, limit: int, timeout: float
) -> None:
    """Refuse a request whose body is not wanted (a 429) once the client has sent it: closing
    while a client still sends makes its socket reset, and it never reads the answer (an
    HTTP client writes the whole body before it reads). The body is discarded as it comes,
    up to `limit` bytes within `timeout`; one declared larger is refused at once."""
    length = declared_length(scope)
    if length is None or length <= limit:
        try:
            if not await discard_body(receive, limit, timeout):
                return  # the client left: nobody to answer
        except Refusal:
            pass  # too large or too slow after all: answer now, the connection closes
    await refuse(send, refusal)


async def discard_body(receive: Receive, limit: int, timeout: float) -> bool:
    """Read the body and keep none of it; False if the client left first, a Refusal if it
    passes `limit` bytes or `timeout` seconds."""
    size = 0
    try:
        async with asyncio.timeout(timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return False
                size += len(message.get("body", b""))
                if size > limit:
                    raise BodyLimit(limit).refusal()
                if not message.get("more_body", False):
                    return True
    except TimeoutError:
        raise Refusal(408, "zeitueberschreitung", f"the body took over {timeout:g} s") from None


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}
