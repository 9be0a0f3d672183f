"""The web search provider: a SearxNG instance's JSON API, or none.

`NOVABERG_SEARCH_URL` names the instance's base URL; a search is
`GET {base}/search?q=<query>&format=json` (the instance must have the JSON format
enabled), whose `results` list carries `url`, `title` and `content` per hit. A fetch is a
plain GET of a page, reduced to its visible text. Failures raise `WebSearchError`; a
caller reports them and never substitutes made-up results.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Final, Protocol

import httpx

from novaberg.config import Settings

SEARCH_TIMEOUT: Final = 10.0
"""Seconds per search or fetch request."""

FETCH_CHARS: Final = 4000
"""A fetched page is cut to this many characters of text (the model's context is small)."""

SNIPPET_CHARS: Final = 300


class WebSearchError(RuntimeError):
    """The provider could not answer (unreachable, HTTP error, unreadable JSON)."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    url: str
    title: str
    snippet: str


class WebSearchProvider(Protocol):
    """What the thinker and the research job need from a search engine."""

    name: str

    async def search(self, query: str, limit: int = 5) -> list[SearchResult]: ...

    async def fetch(self, url: str) -> str: ...


_SCRIPT = re.compile(r"<(script|style|noscript)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def page_text(markup: str, limit: int = FETCH_CHARS) -> str:
    """The visible text of an HTML page (scripts and styles dropped), whitespace collapsed."""
    text = html.unescape(_TAG.sub(" ", _SCRIPT.sub(" ", markup)))
    return " ".join(text.split())[:limit]


def results_from_json(data: Any, limit: int) -> list[SearchResult]:
    """The first `limit` usable hits of a SearxNG JSON answer (hits without a URL dropped)."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise WebSearchError("search answer has no 'results' list")
    hits: list[SearchResult] = []
    for item in data["results"]:
        if not isinstance(item, dict) or not str(item.get("url") or "").strip():
            continue
        hits.append(
            SearchResult(
                url=str(item["url"]).strip(),
                title=" ".join(str(item.get("title") or "").split()),
                snippet=" ".join(str(item.get("content") or "").split())[:SNIPPET_CHARS],
            )
        )
        if len(hits) >= limit:
            break
    return hits


class SearxngProvider:
    """A SearxNG instance reached over HTTP."""

    name = "searxng"

    def __init__(self, base_url: str, *, timeout: float = SEARCH_TIMEOUT) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    async def _get(self, url: str, params: dict[str, str] | None = None) -> httpx.Response:
        try:
            async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=True) as client:
                response = await client.get(url, params=params)
        except httpx.HTTPError as exc:
            raise WebSearchError(f"{type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            raise WebSearchError(f"HTTP {response.status_code} from {url}")
        return response

    async def search(self, query: str, limit: int = 5) -> list[SearchResult]:
        response = await self._get(f"{self.base_url}/search", params={"q": query, "format": "json"})
        try:
            data = response.json()
        except ValueError as exc:
            raise WebSearchError("search answer is not JSON") from exc
        return results_from_json(data, limit)

    async def fetch(self, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise WebSearchError(f"not a web address: {url!r}")
        return page_text((await self._get(url)).text)


def provider_from_settings(settings: Settings) -> WebSearchProvider | None:
    """The configured provider, or None when `NOVABERG_SEARCH_URL` is unset."""
    url = (settings.search_url or "").strip()
    return SearxngProvider(url) if url else None
