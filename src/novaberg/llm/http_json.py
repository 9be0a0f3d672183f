"""JSON-over-HTTP for OpenAI-compatible servers, with the one retry policy both the
chat client and the remote embedder use.

Policy:
- a read timeout is reported at once as `ModelTimeout` (retrying a slow model only
  multiplies the wait);
- a connection error or a 5xx server fault is retried `NOVABERG_LLM_RETRIES` times with
  exponential backoff, then `ModelUnreachable` / `ModelUnavailable`;
- a request error — any 4xx, or a 5xx whose body is a request validation error (some
  servers answer a schema violation with 500) — is `ModelRefused` at once, carrying the
  server's own message: the same request would be refused again; a 4xx saying the prompt
  exceeds the model's context is `ModelContextExceeded` (that call only);
- all attempts and back-offs of one request together stay within the configured
  timeout, so a dead server costs a turn at most that long;
- a URL found unreachable is answered from memory for `UNREACHABLE_MEMO_SECONDS`, so the
  calls right after (the next node, the other judges) fail at once instead of each
  waiting through its own retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from typing import Any

import httpx

from novaberg.llm.errors import (
    ModelContextExceeded,
    ModelRefused,
    ModelTimeout,
    ModelUnavailable,
    ModelUnreachable,
)

log = logging.getLogger(__name__)

BACKOFF_SECONDS = 0.5
"""First retry waits this long, each further one twice as long (0.5, 1, 2, ...)."""

CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection; a server that is not there should fail fast."""

ERROR_TEXT_LIMIT = 300
"""How much of an error body is quoted in an exception message."""

UNREACHABLE_MEMO_SECONDS = 5.0
"""How long a URL that could not be reached is refused without a new attempt."""

_VALIDATION_ERROR = re.compile(
    r"\bvalidation errors?\b|'loc':\s*\(\s*'body'|\"loc\":\s*\[\s*\"body\"", re.IGNORECASE
)
"""How a request validation error reads in a 5xx body (pydantic/FastAPI wording, as the
llama-cpp-python server returns it with status 500)."""


_CONTEXT_EXCEEDED = re.compile(
    r"context[_ ]length|context window|context size|maximum context", re.IGNORECASE
)
"""How servers word a prompt longer than the model's context (OpenAI's and vLLM's
"maximum context length", llama-cpp-python's `context_length_exceeded`, llama-server's
"context size")."""


def is_context_exceeded(message: str) -> bool:
    """True if a refusal says the prompt does not fit the model's context."""
    return bool(_CONTEXT_EXCEEDED.search(message))


def is_request_validation_error(message: str) -> bool:
    """True if a server-error body is really a complaint about the request."""
    return bool(_VALIDATION_ERROR.search(message))


class JsonClient:
    """POSTs JSON and returns the decoded answer; one `httpx.AsyncClient` per event loop."""

    def __init__(
        self,
        *,
        timeout: float,
        retries: int,
        api_key: str = "",
        backoff: float = BACKOFF_SECONDS,
    ) -> None:
        self.total_timeout = timeout
        self.timeout = httpx.Timeout(timeout, connect=min(CONNECT_TIMEOUT, timeout))
        self.retries = retries
        self.backoff = backoff
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unreachable: dict[str, tuple[float, str]] = {}

    def _http(self) -> httpx.AsyncClient:
        # A pooled client is bound to the loop it first ran on; the CLI and tests may
        # use one backend object from more than one loop.
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(timeout=self.timeout, headers=self.headers)
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and not self._client.is_closed:
            with contextlib.suppress(RuntimeError):  # its loop is already gone
                await self._client.aclose()
        self._client = None

    def _remembered_unreachable(self, url: str) -> None:
        memo = self._unreachable.get(url)
        if memo is None:
            return
        until, problem = memo
        if time.monotonic() >= until:
            del self._unreachable[url]
            return
        raise ModelUnreachable(f"{problem} (moments ago; not tried again yet)")

    async def post(self, url: str, payload: dict[str, Any]) -> dict[str, Any]:
        self._remembered_unreachable(url)
        attempts = self.retries + 1
        deadline = time.monotonic() + self.total_timeout
        problem = ""
        unreachable = False
        attempt = 0
        while True:
            attempt += 1
            remaining = max(deadline - time.monotonic(), 0.001)
            limit = httpx.Timeout(remaining, connect=min(CONNECT_TIMEOUT, remaining))
            try:
                response = await self._http().post(url, json=payload, timeout=limit)
            except httpx.ConnectTimeout as exc:
                problem, unreachable = f"cannot connect to {url}: {type(exc).__name__}", True
            except httpx.TimeoutException as exc:
                raise ModelTimeout(
                    f"{url}: no answer within {self.total_timeout:.0f}s ({type(exc).__name__})"
                ) from exc
            except httpx.TransportError as exc:
                problem, unreachable = f"cannot connect to {url}: {exc or type(exc).__name__}", True
            else:
                if response.status_code < 400:
                    self._unreachable.pop(url, None)
                    return _decode(url, response)
                message = _server_message(response)
                problem = f"{url} answered {response.status_code}: {message}"
                unreachable = False
                if response.status_code < 500 and is_context_exceeded(message):
                    raise ModelContextExceeded(f"{problem} (this prompt is too long)")
                if response.status_code < 500 or is_request_validation_error(message):
                    raise ModelRefused(
                        f"{problem} (the server refused the request; not retried)",
                        status=response.status_code,
                        server_message=message,
                    )
            delay = self.backoff * 2 ** (attempt - 1)
            if attempt >= attempts or time.monotonic() + delay >= deadline:
                break
            log.warning("%s; retry %d/%d in %.2fs", problem, attempt, self.retries, delay)
            await asyncio.sleep(delay)
        summary = f"{problem} (after {attempt} attempt(s))"
        if unreachable:
            self._unreachable[url] = (time.monotonic() + UNREACHABLE_MEMO_SECONDS, problem)
            raise ModelUnreachable(summary)
        raise ModelUnavailable(summary)


def _decode(url: str, response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except json.JSONDecodeError as exc:
        raise ModelUnavailable(
            f"{url} answered non-JSON: {response.text[:ERROR_TEXT_LIMIT]!r}"
        ) from exc
    if not isinstance(data, dict):
        raise ModelUnavailable(f"{url} answered {type(data).__name__}, expected an object")
    return data


def _server_message(response: httpx.Response) -> str:
    """The server's own words, on one line: OpenAI-style `{"error": {"message": ...}}`,
    FastAPI's `{"detail": ...}`, or the body."""
    try:
        data = response.json()
    except json.JSONDecodeError:
        return _one_line(response.text) or response.reason_phrase
    if isinstance(data, dict):
        error = data.get("error", data.get("detail"))
        if isinstance(error, dict) and "message" in error:
            return _one_line(str(error["message"]))
        if error:
            return _one_line(str(error))
    return _one_line(json.dumps(data))


def _one_line(text: str) -> str:
    return " ".join(text.split())[:ERROR_TEXT_LIMIT]


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")
