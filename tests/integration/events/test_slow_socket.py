"""A WebSocket client that stops reading is closed with 4408, as the README promises: the
server gives it up once it is a byte budget behind, drops what it had queued at once, and
the close frame follows the data already on its way (seen when the client reads again)."""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from novaberg.events.delivery import CLOSE_TOO_SLOW, Delivery
from novaberg.events.model import StageMessage

CAP = 64 * 1024


def _small_buffer_socket(url: str) -> socket.socket:
    """A client socket with a tiny receive buffer: the server's transport fills quickly."""
    parts = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((parts.hostname, parts.port))
    sock.setblocking(False)
    return sock


async def test_a_client_that_stops_reading_is_closed_with_4408(
    server, token, redis: aioredis.Redis
) -> None:
    hub = server.app.state.chat.hub
    hub.buffer_bytes = CAP
    anna = await token("anna")
    sender = Delivery(redis)
    block = StageMessage(
        character_id="nova", turn_id="t", node="router", label="x" * 16_000, graph="character"
    )
    url = f"{server.ws_url}?token={anna}"
    # no compression: the test's repetitive text would shrink to nothing on the wire
    small = _small_buffer_socket(server.url)
    async with connect(url, sock=small, max_queue=1, compression=None) as ws:
        await ws.recv()  # the greeting; from now on the client reads nothing
        sent = 0
        while hub.connection_count("anna") and sent < 3000:  # bounded: ~48 MB at most
            await sender.send("anna", block)
            sent += 1
            if sent % 20 == 0:
                await asyncio.sleep(0.01)
        assert hub.connection_count("anna") == 0, f"still attached after {sent} messages"
        received = 0
        with_code = None
        try:
            while True:  # reading again: the data on its way, then the close frame
                await asyncio.wait_for(ws.recv(), 20)
                received += 1
        except ConnectionClosed as closed:
            with_code = closed.rcvd.code if closed.rcvd else None
    assert with_code == CLOSE_TOO_SLOW, f"closed with {with_code} after {received} of {sent}"
    assert received < sent, "what was queued past the budget was dropped, not sent"
