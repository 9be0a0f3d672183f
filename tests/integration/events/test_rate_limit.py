"""Per-token rate limit on the intake: a token bucket (burst, then a sustained rate); past it
429 `zu_viele_anfragen` with `Retry-After`, nothing queued; other tokens are not affected."""

from __future__ import annotations

import httpx
import redis.asyncio as aioredis
from event_helpers import post

from novaberg.api.rate_limit import RateLimiter, retry_after_header
from novaberg.store import keys


def test_the_bucket_allows_a_burst_then_the_rate() -> None:
    limiter = RateLimiter(rate=2.0, burst=3)
    assert [limiter.retry_after("t", now=100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.retry_after("t", now=100.0) == 0.5, "one request per 0.5 s"
    assert limiter.retry_after("t", now=100.5) == 0.0, "refilled after 0.5 s"
    assert limiter.retry_after("other", now=100.5) == 0.0, "buckets are per key"
    assert limiter.retry_after("t", now=200.0) == 0.0
    assert [limiter.retry_after("t", now=200.0) for _ in range(3)][-1] > 0, "burst at most 3"
    assert RateLimiter(rate=0, burst=1).retry_after("t") == 0.0, "0 = no limit"
    assert retry_after_header(0.2) == "1" and retry_after_header(2.1) == "3"


def test_the_bucket_table_is_bounded() -> None:
    limiter = RateLimiter(rate=1.0, burst=1, size=3)
    for key in "abcd":
        limiter.retry_after(key, now=1.0)
    assert len(limiter._buckets) == 3 and "a" not in limiter._buckets


async def test_a_token_past_its_rate_gets_429_and_nothing_is_queued(
    http: httpx.AsyncClient, server, token, redis: aioredis.Redis
) -> None:
    server.app.state.chat.limiter = RateLimiter(rate=0.5, burst=3)
    anna, bob = await token("anna"), await token("bob")
    answers = [await post(http, anna, f"Nachricht {n}") for n in range(5)]
    assert [a.status_code for a in answers] == [202, 202, 202, 429, 429]
    refused = answers[3]
    assert refused.json()["fehler"] == "zu_viele_anfragen"
    assert int(refused.headers["retry-after"]) >= 1
    assert await redis.llen(keys.prompt_queue(keys.Pair("anna", "nova"))) == 3
    assert (await post(http, bob, "Hallo")).status_code == 202, "another user is not affected"
