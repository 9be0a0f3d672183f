"""`POST /chat` answered as raw ASGI, before the framework sees the request.

Why: the intake is the one endpoint with a latency goal (p99 ≤ 5 ms at 1,000 msg/s, on two
cores shared with the client and Redis; docs/behaviour/events.md#intake). Measured with
py-spy, FastAPI's middleware stack, router and Request/Response objects cost more CPU per
request than everything the intake itself does. This path checks the token, reads the body,
then hands it to `chat.accept_body` — the same code, checks and error codes the documented
FastAPI route uses — and writes the answer as two ASGI messages. Every other request goes
through FastAPI unchanged (and its request guard, api/request_guard.py, whose
auth-before-body, size and time checks this path repeats).
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.types import Receive, Scope, Send

from novaberg.api.chat import MAX_BODY_BYTES, Reply, accept_body, authorize, error_reply
from novaberg.api.request_guard import Refusal, declared_length, header, read_body
from novaberg.api.security_headers import BASE_HEADERS

log = logging.getLogger(__name__)

JSON_TYPE = (b"content-type", b"application/json")
CLOSE = (b"connection", b"close")


def is_chat_post(scope: Scope) -> bool:
    return scope["type"] == "http" and scope["path"] == "/chat" and scope["method"] == "POST"


async def serve_chat(app_state: Any, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer one `POST /chat` (see the module docstring). The token is checked before the
    body is read, the body must arrive within `body_timeout`; a refusal that leaves the body
    unread closes the connection (the rest must not be taken as the next request)."""
    try:
        who = await authorize(app_state, header(scope, b"authorization"))
        if isinstance(who, Reply):
            await _send(send, who, close=True)
            return
        length = declared_length(scope)
        if length is not None and length > MAX_BODY_BYTES:
            refused = error_reply(413, "text_zu_lang", f"the body exceeds {MAX_BODY_BYTES} bytes")
            await _send(send, refused, close=True)
            return
        try:
            body = await read_body(receive, MAX_BODY_BYTES, app_state.settings.body_timeout)
        except Refusal as refusal:
            code = "text_zu_lang" if refusal.status == 413 else refusal.code
            await _send(send, error_reply(refusal.status, code, refusal.detail), close=True)
            return
        if body is None:  # the client went away before its body arrived
            return
        reply = await accept_body(app_state, who[0], who[1], body)
    except Exception:  # no framework below us turns a bug into a 500
        log.exception("POST /chat failed")
        reply = error_reply(500, "interner_fehler", "the intake failed; not accepted")
    await _send(send, reply)


async def _send(send: Send, reply: Reply, *, close: bool = False) -> None:
    headers = [JSON_TYPE, (b"content-length", b"%d" % len(reply.body)), *BASE_HEADERS]
    headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers]
    if close:
        headers.append(CLOSE)
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})
