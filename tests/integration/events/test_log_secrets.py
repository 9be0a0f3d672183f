"""No API token in any log at any level: the real server (in-process at uvicorn's most verbose
level, and `novaberg api` as shipped, at DEBUG with its access log) is driven with tokens in
the WebSocket URL, in bearer headers and in a failing request; its whole log output is then
searched for the tokens. (tests/conftest.py also checks every record of the whole run.)"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest
import uvicorn
from event_helpers import free_port
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from novaberg.api.app import create_app
from novaberg.api.context import AppContext
from novaberg.runtime.log_redaction import redact

TRACE = 5
"""uvicorn's level below DEBUG (it logs every ASGI message, scope and headers included)."""


async def _drive(url: str, token: str) -> None:
    """Touch every place a token travels: WebSocket query, bearer header, a refused token,
    a query parameter on HTTP, an error path."""
    ws_url = url.replace("http://", "ws://") + "/ws"
    async with connect(f"{ws_url}?token={token}&since=0") as ws:
        await ws.recv()
    async with connect(f"{ws_url}?token={token}x") as ws:  # unknown token: 4401
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 10)
    bearer = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, timeout=20) as http:
        posted = await http.post(
            "/chat", json={"character_id": "nova", "text": "Hi"}, headers=bearer
        )
        assert posted.status_code == 202, posted.text
        assert (await http.get("/chat/me", headers=bearer)).status_code == 200
        assert (await http.get(f"/agents/notes?token={token}", headers=bearer)).status_code == 200
        bad = await http.post("/agents/notes", content=b"{", headers=bearer)
        assert bad.status_code in (400, 422)


async def test_in_process_server_at_trace_level_logs_no_token(
    settings, endpoints, redis, db, model, gate, token, caplog
) -> None:
    anna = await token("anna")
    ctx = AppContext(settings, endpoints, redis, db, model, gate)
    port = free_port()
    config = uvicorn.Config(
        create_app(context=ctx),
        host="127.0.0.1",
        port=port,
        log_level="trace",
        access_log=True,
        log_config=None,  # uvicorn's loggers propagate to the root: caplog sees them
    )
    server = uvicorn.Server(config)
    caplog.set_level(TRACE)
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.01)
        assert server.started
        await _drive(f"http://127.0.0.1:{port}", anna)
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 15)
    lines = []
    for record in caplog.records:
        lines.append(record.getMessage())
        if record.exc_text:
            lines.append(record.exc_text)
    text = "\n".join(lines)
    assert "WebSocket /ws?token=***" in text, "the handshake was logged, with the token masked"
    assert "ASGI [" in text, "the trace level logged every ASGI message"
    assert anna not in text
    logging.getLogger("uvicorn.error").setLevel(logging.INFO)  # leave no trace level behind


async def test_novaberg_api_at_debug_logs_no_token(api_process: Any, token) -> None:
    url, out = api_process(NOVABERG_LOG_LEVEL="DEBUG")  # the most verbose: access log on
    anna = await token("anna")
    await _drive(url, anna)
    await asyncio.sleep(0.5)  # the last access-log lines reach the file
    text = out.read_text(errors="replace")
    assert "WebSocket /ws?token=***" in text, text[-3000:]
    assert "/agents/notes?token=***" in text, "the access log ran and masked the query"
    assert anna not in text


def test_redact_masks_every_form_a_token_takes() -> None:
    token = "nvb_AbC-123_xyz"
    assert redact(f"/ws?token={token}&since=3") == "/ws?token=***&since=3"
    assert redact(f"(b'authorization', b'Bearer {token}')") == "(b'authorization', b'Bearer ***')"
    assert redact(f"stored {token}.") == "stored nvb_***."
    assert redact("no secret here") == "no secret here"
