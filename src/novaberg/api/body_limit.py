"""A size limit on request bodies for the FastAPI routes (`POST /chat` has its own).

Without it a client could make the server hold a body of any size in memory; the largest
legitimate body (a note of 20,000 characters) is far below the limit.
"""

from __future__ import annotations

from fastapi import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_REQUEST_BYTES = 1_048_576


def _too_large() -> HTTPException:
    return HTTPException(
        413, detail={"fehler": "zu_gross", "detail": f"body over {MAX_REQUEST_BYTES} bytes"}
    )


class BodyLimit:
    """Refuses a declared Content-Length over the limit at once, and a streamed body as
    soon as it passes the limit (413 either way)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > MAX_REQUEST_BYTES:
                refusal = _too_large()
                await JSONResponse({"detail": refusal.detail}, refusal.status_code)(
                    scope, receive, send
                )
                return
        seen = 0

        async def counted() -> Message:  # raised inside the app: FastAPI answers the 413
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > MAX_REQUEST_BYTES:
                raise _too_large()
            return message

        await self.app(scope, counted, send)
