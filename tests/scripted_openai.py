"""A second model server for tests: an OpenAI-compatible `/v1/chat/completions` on
127.0.0.1 whose answers come from its own `ScriptedLLM` (the one model double), run by
uvicorn in a thread. A test points the page's model connection at it and sees which
server a turn used. Requests without the right bearer key get OpenAI's 401."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from novaberg.config import Role
from novaberg.llm.scripted import ScriptedLLM


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ScriptedOpenAIServer:
    def __init__(self, llm: ScriptedLLM, key: str) -> None:
        self.llm = llm
        self.key = key
        self.requests: list[dict[str, Any]] = []
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        app = FastAPI()
        app.post("/v1/chat/completions")(self._complete)
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    async def _complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        if request.headers.get("authorization") != f"Bearer {self.key}":
            error = {"message": "Incorrect API key provided", "type": "invalid_request_error"}
            return JSONResponse({"error": error}, status_code=401)
        fmt = (body.get("response_format") or {}).get("json_schema") or {}
        done = await self.llm._complete(
            Role.CHAT,
            body["messages"],
            json_schema=fmt.get("schema"),
            schema_name=fmt.get("name"),
            temperature=body.get("temperature"),
            max_tokens=body.get("max_tokens"),
        )
        message = {"role": "assistant", "content": done.text}
        return JSONResponse(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": done.prompt_tokens, "completion_tokens": 1},
            }
        )

    def __enter__(self) -> ScriptedOpenAIServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
