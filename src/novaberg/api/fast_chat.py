"""`POST /chat` answered as raw ASGI, before the framework sees the request.

Why: the intake is the one endpoint with a latency goal (p99 ≤ 5 ms at 1,000 msg/s, on two
cores shared with the client and Redis; docs/behaviour/events.md#intake). Measured with
py-spy, FastAPI's middleware stack, router and Request/Response objects cost more CPU per
request than everything the intake itself does. This path reads the body, then hands it to
`chat.chat_reply` — the same code, checks and error codes the documented FastAPI route uses
— and writes the answer as two ASGI messages. Every other request goes through FastAPI
unchanged.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.types import Receive, Scope, Send

from novaberg.api.chat import MAX_BODY_BYTES, Reply, chat_reply, error_reply

log = logging.getLogger(__name__)

JSON_TYPE = (b"content-type", b"application/json")


def is_chat_post(scope: Scope) -> bool:
    return scope["type"] == "http" and scope["path"] == "/chat" and scope["method"] == "POST"


async def serve_chat(app_state: Any, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer one `POST /chat` (see the module docstring)."""
    authorization = None
    for name, value in scope["headers"]:
        if name == b"authorization":
            authorization = value.decode("latin-1")
            break
    body = await _read_body(receive)
    if body is None:  # the client went away before its body arrived
        return
    try:
        reply = await chat_reply(app_state, authorization, body)
    except Exception:  # no framework below us turns a bug into a 500
        log.exception("POST /chat failed")
        reply = error_reply(500, "interner_fehler", "the intake failed; not accepted")
    await _send(send, reply)


async def _read_body(receive: Receive) -> bytes | None:
    """The whole body; past `MAX_BODY_BYTES` the rest is read and dropped (what is kept
    is still longer than the limit, so the check sees it). None if the client left."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        if size <= MAX_BODY_BYTES:
            chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _send(send: Send, reply: Reply) -> None:
    headers = [JSON_TYPE, (b"content-length", b"%d" % len(reply.body))]
    headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})
