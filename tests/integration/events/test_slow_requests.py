"""Slowloris: `novaberg api` as shipped closes a connection whose request headers or body
trickle in past their deadline (NOVABERG_HEADER_TIMEOUT / NOVABERG_BODY_TIMEOUT), so a few
hundred such clients cannot hold its sockets."""

from __future__ import annotations

import asyncio
import time
from typing import Any

DEADLINE = "1"
"""Seconds given to the server under test for headers and for a body."""

WAIT = 15.0
"""How long the test waits for the server to close (a bound, not a timing assertion)."""


async def _closed_after(url: str, sent: bytes) -> tuple[bytes, float]:
    """Open a connection, send `sent`, then nothing: what the server answered before it
    closed, and after how many seconds (a connection still open after WAIT is a failure)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    began = time.monotonic()
    writer.write(sent)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), WAIT)  # b"" = closed; read() waits for EOF
    writer.close()
    return answer, time.monotonic() - began


async def test_trickling_headers_and_bodies_are_cut_off(api_process: Any, token) -> None:
    url, _ = api_process(NOVABERG_HEADER_TIMEOUT=DEADLINE, NOVABERG_BODY_TIMEOUT=DEADLINE)
    anna = await token("anna")
    nothing, _ = await _closed_after(url, b"")
    assert nothing.startswith(b"HTTP/1.1 408") or nothing == b""
    half_head, _ = await _closed_after(url, b"POST /chat HTTP/1.1\r\nHost: x\r\nAuthoriz")
    assert half_head.startswith(b"HTTP/1.1 408"), half_head[:100]
    for path in ("/chat", "/agents/notes"):
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {anna}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        )
        half_body, _ = await _closed_after(url, head.encode() + b'{"character_id": "nova", ')
        assert half_body.startswith(b"HTTP/1.1 408"), (path, half_body[:200])
        assert b"zeitueberschreitung" in half_body
