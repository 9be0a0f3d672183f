"""The HTTP path of the recall bench (`bench/memory_recall.py --http`): each question goes
through the real `GET /memory/{character}/search` of the app — `create_app` with the
bench's own services, model layer and pool, routing, bearer-token check, query validation
and JSON encoding as served — over an in-process ASGI transport (httpx.ASGITransport; no
socket: what is timed is the app's whole request path, not the loopback network).

Evidence recall is read off the JSON the endpoint answers (a hit whose `sources` name an
evidence turn's imported `source_id`), so it measures what a client sees. The latency run
interleaves, per question text, the HTTP request and the same search in-process — with and
without the library layer — so load that comes and goes hits all three alike.

The endpoint resolves time expressions against the clock; the data sets' questions are
relative to their `NOW`, so the endpoint's clock is set to it (`fixed_clock`): the only
thing the bench replaces. Nothing else is a double.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import datetime, tzinfo
from typing import Any

import httpx

from novaberg.api import memory_search as endpoint
from novaberg.api.app import create_app
from novaberg.api.context import AppContext
from novaberg.llm.gate import ModelGate
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import ALL_LAYERS, LAYER_LIBRARY, SearchOptions
from novaberg.store.users import issue_token

HTTP = "http fusion"
IN_PROCESS = "in-process fusion"
WITHOUT_LIBRARY = "in-process fusion ohne bibliothek"
SERIES = (HTTP, IN_PROCESS, WITHOUT_LIBRARY)
"""The latency series of one run: the endpoint, and `search_memory` called directly (the
function the endpoint calls) with every layer and with every layer but the library."""

NO_LIBRARY = frozenset(ALL_LAYERS - {LAYER_LIBRARY})


@contextlib.contextmanager
def fixed_clock(now: datetime) -> Iterator[None]:
    """The search endpoint's `datetime.now` answers `now` (module docstring)."""

    class Clock(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> Clock:  # type: ignore[override]
            return now.astimezone(tz) if tz is not None else now  # type: ignore[return-value]

    real = endpoint.datetime
    endpoint.datetime = Clock  # type: ignore[misc]
    try:
        yield
    finally:
        endpoint.datetime = real  # type: ignore[misc]


@contextlib.asynccontextmanager
async def http_client(bench: Any, user: str, now: datetime) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app built on the bench's services, with a bearer token of `user`."""
    assert bench.services.endpoints is not None
    ctx = AppContext(
        bench.settings,
        bench.services.endpoints,
        bench.redis,
        bench.pool,
        bench.model,
        ModelGate(bench.redis, "bench-http", 1),
    )
    app = create_app(context=ctx)
    token = (await issue_token(bench.pool, user, "recall-bench")).token
    with fixed_clock(now):
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app),
                base_url="http://novaberg",
                headers={"Authorization": f"Bearer {token}"},
                timeout=30.0,
            ) as client,
        ):
            yield client


async def http_search(client: httpx.AsyncClient, character: str, text: str) -> list[dict]:
    """The hits `GET /memory/{character}/search?q=…&limit=10` answers."""
    response = await client.get(f"/memory/{character}/search", params={"q": text, "limit": 10})
    response.raise_for_status()
    return list(response.json()["hits"])


def evidence_rank(hits: list[dict], evidence: frozenset[str]) -> int | None:
    """The rank of the first hit whose sources name an evidence turn (None: not found)."""
    for rank, hit in enumerate(hits, start=1):
        if any(source.get("source_id") in evidence for source in hit.get("sources", [])):
            return rank
    return None


async def http_recall(
    client: httpx.AsyncClient, character: str, queries: list[Any], recall: Any
) -> Any:
    """`recall` (memory_recall.Recall) filled with every question asked over HTTP."""
    for query in queries:
        hits = await http_search(client, character, query.text)
        recall.add(query.kind, evidence_rank(hits, query.evidence_ids))
    return recall


async def http_latency(
    bench: Any,
    client: httpx.AsyncClient,
    pair: Any,
    queries: list[Any],
    texts: list[Any],
    now: datetime,
) -> dict[str, list[float]]:
    """Milliseconds per search of each series (`SERIES`), the three interleaved per text
    (rotating which goes first). One warm-up round with the plain questions first
    (connections, plans)."""

    async def in_process(text: str, options: SearchOptions) -> Any:
        return await search_memory(
            bench.redis, bench.pool, bench.model, pair, text,
            now=now, tz=bench.settings.tz, options=options,
        )  # fmt: skip

    every = SearchOptions(limit=10)
    no_library = SearchOptions(limit=10, layers=NO_LIBRARY)
    for query in queries:
        await http_search(client, pair.character_id, query.text)
        await in_process(query.text, every)
        await in_process(query.text, no_library)
    samples: dict[str, list[float]] = {name: [] for name in SERIES}
    for index, query in enumerate(texts):
        runs: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            (HTTP, lambda q=query: http_search(client, pair.character_id, q.text)),
            (IN_PROCESS, lambda q=query: in_process(q.text, every)),
            (WITHOUT_LIBRARY, lambda q=query: in_process(q.text, no_library)),
        ]
        shift = index % len(runs)
        for name, run in runs[shift:] + runs[:shift]:
            started = time.perf_counter()
            await run()
            samples[name].append((time.perf_counter() - started) * 1000)
    return samples


async def measure(
    bench: Any, pair: Any, queries: list[Any], texts: list[Any], now: datetime, recall: Any
) -> tuple[Any, dict[str, list[float]] | None]:
    """Evidence recall over HTTP (`recall` filled) and, when `texts` are given, the latency
    series: one app and client for both."""
    async with http_client(bench, pair.user_id, now) as client:
        await http_recall(client, pair.character_id, queries, recall)
        if not texts:
            return recall, None
        return recall, await http_latency(bench, client, pair, queries, texts, now)


async def report(
    bench: Any,
    pair: Any,
    queries: list[Any],
    texts: list[Any],
    now: datetime,
    recall: Any,
    summarize: Callable[[list[float]], dict[str, Any]],
) -> dict[str, Any]:
    """`measure` as the bench's record: recall@5/@10 and per kind; latency per series."""
    recall, samples = await measure(bench, pair, queries, texts, now, recall)
    record: dict[str, Any] = {
        "recall_at_5": recall.at(5),
        "recall_at_10": recall.at(10),
        "je_art_at_10": {
            kind: round(100 * hit / total, 1)
            for kind, (hit, total) in sorted(recall.by_kind.items())
        },
    }
    if samples is not None:
        record["latenz"] = {name: summarize(values) for name, values in samples.items()}
        record["last_1min"] = round(os.getloadavg()[0], 1)
    return record


def print_rows(summary: list[dict], cell: Callable[[float | None], str]) -> None:
    """The `--http` rows of the bench's table: recall through the endpoint and the latency
    series measured in one run."""
    rows = [row for row in summary if "http" in row]
    if not rows:
        return
    print("\nthrough GET /memory/{c}/search (in-process ASGI): recall@5 / @10 (%), latency ms")
    for row in rows:
        http = row["http"]
        print(
            f"{row['embedder']:9} {row['sprache']:4} {row['turns']:>7}"
            f"  recall {cell(http['recall_at_5'])} / {cell(http['recall_at_10'])}"
        )
        for name, timing in http.get("latenz", {}).items():
            print(
                f"    {name:36} p50 {timing['p50_ms']}  p90 {timing['p90_ms']}"
                f"  p99 {timing['p99_ms']}  n={timing['n']}"
            )
        if "last_1min" in http:
            print(f"    load {http['last_1min']}")
