"""Every error under `/v1/` in OpenAI's shape, `{"error": {"message", "type", "param",
"code"}}`, whoever produced it: the request guard (401 before the body, 413, 408, 429, 400),
the auth dependency (401), FastAPI's schema check (422), an unknown path (404) or method
(405), the framework's own 500. Clients written for OpenAI's API (the `openai` package,
Open WebUI, SillyTavern) read only that shape; any other body leaves them with a bare status
code. The routes' own errors keep `{"detail": {"fehler", "detail"}}`; this rewrites them
once at the door's edge, so the guard and the auth need not know about OpenAI.

A body already in OpenAI's shape (the door's own answers) passes unchanged; so does every
answer below 400 (streams included: their first message decides, nothing is buffered).
"""

from __future__ import annotations

import json
from typing import Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PREFIX: Final = "/v1/"

ERROR_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    408: "timeout",
    409: "invalid_request_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    504: "timeout",
}
"""OpenAI's `type` by status; any other status is a `server_error`."""

CODE_BY_STATUS: Final = {
    404: "nicht_gefunden",
    405: "methode_nicht_erlaubt",
    422: "anfrage_ungueltig",
    500: "serverfehler",
}
"""The code of an error whose body names none (the framework's own answers)."""


def error_type(status: int) -> str:
    return ERROR_TYPES.get(status, "server_error")


def _validation_message(errors: list[Any]) -> tuple[str, str | None]:
    """FastAPI's list of validation errors as one sentence, and the first field it names."""
    parts: list[str] = []
    param: str | None = None
    for error in errors[:3]:
        if not isinstance(error, dict):
            continue
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        param = param or where or None
        parts.append(f"{where}: {error.get('msg', 'invalid')}" if where else str(error.get("msg")))
    return "; ".join(parts) or "the request does not match the schema", param


def openai_shape(status: int, body: bytes) -> bytes | None:
    """The error body in OpenAI's shape, or None if it already has it."""
    try:
        data: Any = json.loads(body) if body else None
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return None
    code = CODE_BY_STATUS.get(status, "fehler")
    param: str | None = None
    message = body.decode("utf-8", "replace").strip() or f"HTTP {status}"
    detail = data.get("detail") if isinstance(data, dict) else None
    if isinstance(detail, dict):
        code = str(detail.get("fehler") or code)
        message = str(detail.get("detail") or code)
    elif isinstance(detail, list):
        message, param = _validation_message(detail)
    elif isinstance(detail, str):
        message = detail
    shaped = {
        "error": {"message": message, "type": error_type(status), "param": param, "code": code}
    }
    return json.dumps(shaped, ensure_ascii=False).encode()


class DoorErrors:
    """ASGI middleware: rewrites the error answers of `/v1/` paths (see module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(PREFIX):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def shaping_send(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                if message["status"] < 400:
                    await send(message)
                    return
                start = message
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            await _send_shaped(send, start, b"".join(chunks))

        await self.app(scope, receive, shaping_send)


async def _send_shaped(send: Send, start: Message, body: bytes) -> None:
    status = int(start["status"])
    shaped = openai_shape(status, body)
    headers = list(start.get("headers", []))
    if shaped is not None:
        body = shaped
        headers = [
            (k, v) for k, v in headers if k.lower() not in (b"content-length", b"content-type")
        ]
        headers += [
            (b"content-length", str(len(body)).encode()),
            (b"content-type", b"application/json"),
        ]
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": body})
