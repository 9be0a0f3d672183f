"""The SearxNG web search provider against a local server speaking SearxNG's JSON API."""

from __future__ import annotations

import pytest
from searxng_double import SearxngDouble, searxng_server

from novaberg.config import Settings
from novaberg.websearch import SearxngProvider, WebSearchError, provider_from_settings
from novaberg.websearch.provider import page_text, results_from_json

HITS = [
    {
        "url": "http://127.0.0.1:1/a",
        "title": "Canberra – Wikipedia",
        "content": "Canberra ist die Hauptstadt Australiens.",
    },
    {"title": "ohne url", "content": "wird verworfen"},
    {"url": "http://127.0.0.1:1/b", "title": "  Sydney  ", "content": "größte Stadt"},
]


async def test_search_asks_for_json_and_reads_the_results() -> None:
    with searxng_server(SearxngDouble(results=HITS)) as double:
        provider = SearxngProvider(double.base_url + "/")
        hits = await provider.search("Hauptstadt Australien", limit=5)
    assert [h.title for h in hits] == ["Canberra – Wikipedia", "Sydney"]
    assert hits[0].snippet == "Canberra ist die Hauptstadt Australiens."
    ((path, query),) = double.requests
    assert path == "/search" and query == {"q": ["Hauptstadt Australien"], "format": ["json"]}


async def test_search_honours_the_limit() -> None:
    with searxng_server(SearxngDouble(results=HITS)) as double:
        hits = await SearxngProvider(double.base_url).search("x", limit=1)
    assert [h.url for h in hits] == ["http://127.0.0.1:1/a"]


async def test_http_error_and_unreachable_server_raise_not_fake() -> None:
    with searxng_server(SearxngDouble(results=HITS, status=500)) as double:
        with pytest.raises(WebSearchError, match="HTTP 500"):
            await SearxngProvider(double.base_url).search("x")
        url = double.base_url
    with pytest.raises(WebSearchError):
        await SearxngProvider(url, timeout=2).search("x")  # server gone


async def test_fetch_returns_the_visible_text() -> None:
    page = "<html><head><style>p{}</style><script>var x=1;</script></head><body><h1>Canberra</h1><p>Hauptstadt &amp; Sitz</p></body></html>"
    with searxng_server(SearxngDouble(pages={"/seite": page})) as double:
        text = await SearxngProvider(double.base_url).fetch(double.base_url + "/seite")
        with pytest.raises(WebSearchError, match="404"):
            await SearxngProvider(double.base_url).fetch(double.base_url + "/fehlt")
    assert text == "Canberra Hauptstadt & Sitz"
    with pytest.raises(WebSearchError, match="not a web address"):
        await SearxngProvider("http://127.0.0.1:1").fetch("file:///etc/passwd")


def test_answers_without_results_are_errors() -> None:
    with pytest.raises(WebSearchError):
        results_from_json({"query": "x"}, 5)
    assert results_from_json({"results": []}, 5) == []
    assert page_text("<p>a</p>" * 5000, limit=10) == "a a a a a "[:10]


def test_provider_only_when_configured(settings: Settings) -> None:
    assert provider_from_settings(settings.model_copy(update={"search_url": None})) is None
    assert provider_from_settings(settings.model_copy(update={"search_url": "  "})) is None
    provider = provider_from_settings(
        settings.model_copy(update={"search_url": "http://127.0.0.1:9/"})
    )
    assert isinstance(provider, SearxngProvider) and provider.base_url == "http://127.0.0.1:9"
