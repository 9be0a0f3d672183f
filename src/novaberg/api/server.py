"""How `novaberg serve` and `novaberg api` run the app under uvicorn.

uvicorn closes an idle keep-alive connection but gives a client unlimited time to finish
the headers of a request: a few hundred connections trickling a header line now and then
(slowloris) would hold the server's sockets forever. The protocol here closes a connection
whose request headers are not complete `Settings.header_timeout` seconds after it opened
(or after its next request began). Bodies have their own deadline in the app
(`Settings.body_timeout`, api/request_guard.py), which holds under any ASGI server.
"""

from __future__ import annotations

import asyncio
from asyncio import TimerHandle
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from novaberg.config import Settings

TOO_LATE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 26\r\nconnection: close\r\n\r\nrequest headers too slow\r\n"
)


def http_protocol(header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol with a deadline on every request's headers."""

    class HeaderDeadline(HttpToolsProtocol):
        _deadline: TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(header_timeout, self._too_late)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_late(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.write(TOO_LATE)
                self.transport.close()

    return HeaderDeadline


def run(app: Any, settings: Settings) -> None:
    """Serve `app` on the configured address until stopped (SIGINT/SIGTERM)."""
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        access_log=_access_log(settings),
        http=http_protocol(settings.header_timeout),
    )


def _access_log(settings: Settings) -> bool:
    """One access-log line per request only when debugging: at 1,000 messages a second the
    log line costs more than the intake itself."""
    return settings.log_level.upper() == "DEBUG"
