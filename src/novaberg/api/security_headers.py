"""Headers every HTTP answer carries, so a browser treats it only as what it is
(docs/behaviour/web.md#security-headers).

- `X-Content-Type-Options: nosniff` — a JSON answer or an uploaded picture is never
  guessed into a script or a page.
- `Referrer-Policy: no-referrer` — nothing of Novaberg reads a referrer, and the page must
  not tell the sites its links lead to where it runs (`same-origin` would keep it for our
  own requests, which gain nothing from it: the API authenticates by bearer token, so no
  cross-site request can act with the person's credentials).
- No framing: `X-Frame-Options: DENY` and CSP `frame-ancestors 'none'`, so no other site
  can lay the page (or /docs) under its own and trick a click.
- The page and its assets get a whole Content-Security-Policy: scripts and styles only from
  the server's own files (the page has no inline script, style or `style=` attribute; the
  only dynamic style is set through the DOM, which a CSP allows), pictures from the server
  and the avatars' `blob:` URLs, connections to the server and its WebSocket. Should an
  answer ever smuggle markup into the page, it can run nothing.

FastAPI's /docs loads Swagger UI from a CDN with an inline script, so it gets only the
framing rules. A header a route sets itself (the avatar's stricter CSP) is kept.
`POST /chat` is answered before this middleware (api/fast_chat.py) and adds the first two
itself (`BASE_HEADERS`).
"""

from __future__ import annotations

from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_CSP: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""The chat page's policy. `ws: wss:` beside 'self': browsers that predate CSP level 3 do
not count the page's own WebSocket as 'self'; with no injected script possible
(script-src 'self'), allowing any socket host costs nothing."""

OTHER_CSP: Final = "frame-ancestors 'none'"
"""Everything else, /docs included: not to be framed; what it loads is its own business."""

BASE_HEADERS: Final = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
"""Every answer, the fast `POST /chat` path included."""

FRAME_HEADERS: Final = ((b"x-frame-options", b"DENY"),)

PAGE_PATHS: Final = ("/web/",)
"""Prefixes of the page's assets (the page itself is `/`)."""

PAGE_ROOT_FILES: Final = frozenset({"/", "/sw.js", "/manifest.webmanifest"})
"""The page, its service worker (its CSP is the one its script runs under) and manifest."""


def is_page(path: str) -> bool:
    return path in PAGE_ROOT_FILES or path.startswith(PAGE_PATHS)


class SecurityHeaders:
    """ASGI middleware adding the headers above to every HTTP answer of the app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = (PAGE_CSP if is_page(scope.get("path", "")) else OTHER_CSP).encode("latin-1")
        wanted = (*BASE_HEADERS, *FRAME_HEADERS, (b"content-security-policy", csp))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in wanted if name not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
