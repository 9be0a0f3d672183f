"""The WebSocket lets a browser page in only from the server's own origin or one listed in
NOVABERG_ALLOWED_ORIGINS; a foreign page's handshake is closed with 4403 before its token is
looked at. Clients that send no Origin (the terminal chat, scripts) are not browsers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from event_helpers import WAIT
from websockets.asyncio.client import connect


async def _first(ws_url: str, token: str, origin: str | None) -> tuple[str, int | None, str]:
    """('open', None, '') once the greeting arrives, else ('closed', code, reason)."""
    async with connect(f"{ws_url}?token={token}", origin=origin) as ws:  # type: ignore[arg-type]
        try:
            await asyncio.wait_for(ws.recv(), WAIT)
        except Exception:
            return "closed", ws.close_code, ws.close_reason or ""
        return "open", None, ""


@pytest.mark.parametrize(
    "origin",
    ["https://evil.example", "http://127.0.0.1:1", "null", "http://localhost:{port}"],
    ids=["another site", "another port", "null", "another name for this host"],
)
async def test_a_foreign_origin_is_refused_with_4403(server: Any, token, origin: str) -> None:
    anna = await token("anna")
    origin = origin.format(port=server.url.rsplit(":", 1)[1])
    state, code, reason = await _first(server.ws_url, anna, origin)
    assert (state, code) == ("closed", 4403)
    assert reason == "Ursprung nicht erlaubt"
    unknown = await _first(server.ws_url, "nvb_unbekannt", origin)
    assert unknown[1] == 4403, "refused before the token is looked at"


@pytest.mark.parametrize("origin", ["own", "own upper case", None], ids=["own", "case", "none"])
async def test_the_own_origin_and_none_are_let_in(server: Any, token, origin: str | None) -> None:
    anna = await token("anna")
    own = {"own": server.url, "own upper case": server.url.upper(), None: None}[origin]
    assert (await _first(server.ws_url, anna, own))[0] == "open"


async def test_a_listed_origin_is_let_in(
    server: Any, token, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page served elsewhere (behind a proxy that rewrites Host, or another front end)."""
    anna = await token("anna")
    listed = settings.model_copy(update={"allowed_origins": "https://chat.example.org"})
    monkeypatch.setattr(server.app.state, "settings", listed)
    assert (await _first(server.ws_url, anna, "https://chat.example.org"))[0] == "open"
    assert (await _first(server.ws_url, anna, "https://chat.example.org.evil"))[1] == 4403
    assert (await _first(server.ws_url, anna, "http://chat.example.org"))[1] == 4403
