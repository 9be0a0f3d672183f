"""JSON-over-HTTP for OpenAI-compatible servers, with the one retry policy both the
chat client and the remote embedder use.

Policy: a timeout is reported at once as `ModelTimeout` (retrying a slow model only
multiplies the wait); a connection error or a 5xx answer is retried
`NOVABERG_LLM_RETRIES` times with exponential backoff, then `ModelUnavailable`;
a 4xx answer is `ModelUnavailable` at once, carrying the server's own message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

import httpx

from novaberg.llm.errors import ModelTimeout, ModelUnavailable

log = logging.getLogger(__name__)

BACKOFF_SECONDS = 0.5
"""First retry waits this long, each further one twice as long (0.5, 1, 2, ...)."""

CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection; a server that is not there should fail fast."""

ERROR_TEXT_LIMIT = 300
"""How much of an error body is quoted in an exception message."""


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
        self.timeout = httpx.Timeout(timeout, connect=min(CONNECT_TIMEOUT, timeout))
        self.retries = retries
        self.backoff = backoff
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

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

    async def post(self, url: str, payload: dict[str, Any]) -> dict[str, Any]:
        attempts = self.retries + 1
        problem = ""
        for attempt in range(1, attempts + 1):
            try:
                response = await self._http().post(url, json=payload)
            except httpx.ConnectTimeout as exc:
                problem = f"cannot connect to {url}: {type(exc).__name__}"
            except httpx.TimeoutException as exc:
                raise ModelTimeout(
                    f"{url}: no answer within {self.timeout.read:.0f}s ({type(exc).__name__})"
                ) from exc
            except httpx.TransportError as exc:
                problem = f"cannot connect to {url}: {exc or type(exc).__name__}"
            else:
                if response.status_code < 400:
                    return _decode(url, response)
                message = _server_message(response)
                if response.status_code < 500:
                    raise ModelUnavailable(f"{url} answered {response.status_code}: {message}")
                problem = f"{url} answered {response.status_code}: {message}"
            if attempt < attempts:
                delay = self.backoff * 2 ** (attempt - 1)
                log.warning("%s; retry %d/%d in %.2fs", problem, attempt, self.retries, delay)
                await asyncio.sleep(delay)
        raise ModelUnavailable(f"{problem} (after {attempts} attempt(s))")


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
    """The server's own words: OpenAI-style `{"error": {"message": ...}}` or the body."""
    try:
        data = response.json()
    except json.JSONDecodeError:
        return response.text[:ERROR_TEXT_LIMIT] or response.reason_phrase
    if isinstance(data, dict):
        error = data.get("error", data.get("detail"))
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])[:ERROR_TEXT_LIMIT]
        if error:
            return str(error)[:ERROR_TEXT_LIMIT]
    return json.dumps(data)[:ERROR_TEXT_LIMIT]


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")
