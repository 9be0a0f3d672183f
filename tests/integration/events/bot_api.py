"""A local stand-in for the Telegram Bot API: `{root}/bot{token}/{method}`, answers and errors
shaped like the real API's JSON. Tests queue updates for `getUpdates`, read what arrived by
`sendMessage`, block a chat (403 as Telegram answers a blocked bot) or make the next sends
fail transiently (500)."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import uvicorn
from event_helpers import WAIT, free_port
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

TOKEN = "123456:TEST-token"

BLOCKED = {"ok": False, "error_code": 403, "description": "Forbidden: bot was blocked by the user"}
BROKEN = {"ok": False, "error_code": 500, "description": "Internal Server Error"}
NOT_FOUND = {"ok": False, "error_code": 404, "description": "Not Found"}


@dataclass
class Sent:
    chat_id: int
    text: str


@dataclass
class BotApi:
    url: str = ""
    updates: list[dict[str, Any]] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    blocked: set[int] = field(default_factory=set)
    refused: dict[int, int] = field(default_factory=dict)
    """chat id → sendMessage answers it gets with 403 (the bot was blocked)."""
    failing: int = 0
    """The next this many sendMessage calls answer 500."""
    webhook: str = ""
    webhook_secret: str = ""
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    # -- what the test does ---------------------------------------------------------------

    async def user_writes(self, chat_id: int, text: str | None = None, **extra: Any) -> None:
        """A private message from `chat_id` (text, or e.g. `voice={...}`)."""
        number = next(self._ids)
        message: dict[str, Any] = {
            "message_id": number,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private", "first_name": "Anna"},
            "from": {"id": chat_id, "is_bot": False, "first_name": "Anna"},
            **extra,
        }
        if text is not None:
            message["text"] = text
        async with self._arrived:
            self.updates.append({"update_id": 1000 + number, "message": message})
            self._arrived.notify_all()

    async def wait_sent(self, chat_id: int, count: int = 1, timeout: float = WAIT) -> list[Sent]:
        """The first `count` texts sent to the chat (a bound, not a measurement)."""
        async with self._arrived:
            await asyncio.wait_for(
                self._arrived.wait_for(lambda: len(self.to(chat_id)) >= count), timeout
            )
        return self.to(chat_id)[:count]

    def to(self, chat_id: int) -> list[Sent]:
        return [s for s in self.sent if s.chat_id == chat_id]

    # -- the API ----------------------------------------------------------------------------

    async def endpoint(self, request: Request) -> JSONResponse:
        if request.path_params["token"] != TOKEN:
            return JSONResponse(NOT_FOUND, status_code=404)
        method = request.path_params["method"]
        self.calls.append(method)
        params = await _params(request)
        if method == "getMe":
            return _ok(
                {"id": 42, "is_bot": True, "first_name": "Nova", "username": "nova_test_bot"}
            )
        if method in ("deleteWebhook", "setWebhook"):
            self.webhook = str(params.get("url", ""))
            self.webhook_secret = str(params.get("secret_token", ""))
            return _ok(True)
        if method == "getUpdates":
            return _ok(await self._get_updates(params))
        if method == "sendMessage":
            return await self._send_message(params)
        return JSONResponse(NOT_FOUND, status_code=404)

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)

        def pending() -> list[dict[str, Any]]:
            return [u for u in self.updates if u["update_id"] >= offset]

        async with self._arrived:
            if not pending() and timeout:
                with suppress(TimeoutError):
                    await asyncio.wait_for(self._arrived.wait_for(lambda: bool(pending())), timeout)
            return pending()

    async def _send_message(self, params: dict[str, Any]) -> JSONResponse:
        chat_id = int(params["chat_id"])
        if self.failing:
            self.failing -= 1
            return JSONResponse(BROKEN, status_code=500)
        if chat_id in self.blocked:
            self.refused[chat_id] = self.refused.get(chat_id, 0) + 1
            return JSONResponse(BLOCKED, status_code=403)
        text = str(params["text"])
        async with self._arrived:
            self.sent.append(Sent(chat_id, text))
            self._arrived.notify_all()
        return _ok(
            {
                "message_id": next(self._ids),
                "date": int(time.time()),
                "chat": {"id": chat_id, "type": "private"},
                "from": {"id": 42, "is_bot": True, "first_name": "Nova"},
                "text": text,
            }
        )


def _ok(result: Any) -> JSONResponse:
    return JSONResponse({"ok": True, "result": result})


async def _params(request: Request) -> dict[str, Any]:
    body = await request.body()
    if request.headers.get("content-type", "").startswith("application/json"):
        return dict(json.loads(body or b"{}"))
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8")).items()}


@asynccontextmanager
async def running_bot_api() -> AsyncIterator[BotApi]:
    api = BotApi()
    app = Starlette(routes=[Route("/bot{token}/{method}", api.endpoint, methods=["GET", "POST"])])
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    task = asyncio.create_task(server.serve())
    for _ in range(500):
        if server.started:
            break
        await asyncio.sleep(0.01)
    assert server.started, "the Bot API stand-in did not start"
    api.url = f"http://127.0.0.1:{port}"
    try:
        yield api
    finally:
        server.should_exit = True
        async with api._arrived:
            api._arrived.notify_all()
        await asyncio.wait_for(task, 15)
