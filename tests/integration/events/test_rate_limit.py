"""Per-token rate limit on the intake: a token bucket (burst, then a sustained rate); past it
429 `zu_viele_anfragen` with `Retry-After`, nothing queued; other tokens are not affected."""

from __future__ import annotations

import httpx
import redis.asyncio as aioredis
from event_helpers import post

from novaberg.api.rate_limit import RateLimiter, retry_after_header
from novaberg.pair import Pair
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
    assert await redis.llen(keys.prompt_queue(Pair("anna", "nova"))) == 3
    assert (await post(http, bob, "Hallo")).status_code == 202, "another user is not affected"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_a_flood_of_writes_gets_429_before_anything_is_done(
    http: httpx.AsyncClient, server, token
) -> None:
    """Every other write has a bucket per token too, checked right after the token: past it
    429 `zu_viele_anfragen` with `Retry-After`, nothing stored. Reads are not counted,
    another user's and the same user's other token have their own bucket, and the chat
    bucket is a separate one."""
    server.app.state.write_limiter = RateLimiter(rate=0.5, burst=3)
    anna, bob = await token("anna"), await token("bob")
    answers = [
        await http.post("/agents/notes", json={"name": f"Liste {n}"}, headers=auth(anna))
        for n in range(5)
    ]
    assert [a.status_code for a in answers] == [201, 201, 201, 429, 429]
    refused = answers[3]
    assert refused.json()["detail"]["fehler"] == "zu_viele_anfragen"
    assert int(refused.headers["retry-after"]) >= 1
    for _ in range(10):  # reads are not limited
        listed = await http.get("/agents/notes", headers=auth(anna))
        assert listed.status_code == 200 and len(listed.json()) == 3
    patched = await http.patch("/settings", json={"pro_tag": 1}, headers=auth(anna))
    assert patched.status_code == 429, "every write route shares the token's bucket"
    assert (
        await http.post("/agents/notes", json={"name": "B"}, headers=auth(bob))
    ).status_code == 201
    other = await token("anna")
    assert (
        await http.post("/agents/notes", json={"name": "A"}, headers=auth(other))
    ).status_code == 201
    assert (await post(http, anna, "Hallo")).status_code == 202, "the chat bucket is its own"


async def test_the_write_bucket_comes_from_the_settings_and_spares_the_door(
    http: httpx.AsyncClient, server, token
) -> None:
    """NOVABERG_WRITE_RATE/BURST build the bucket; the OpenAI door's completions take from
    the chat bucket instead (with no worker running it answers 503, not 429)."""
    server.app.state.settings = server.app.state.settings.model_copy(
        update={"write_rate": 0.1, "write_burst": 1}
    )
    anna = await token("anna")
    assert (
        await http.post("/agents/notes", json={"name": "L"}, headers=auth(anna))
    ).status_code == 201
    assert (await http.delete("/agents/notes/1", headers=auth(anna))).status_code == 429
    body = {"model": "nova", "messages": [{"role": "user", "content": "Hallo"}]}
    door = await http.post("/v1/chat/completions", json=body, headers=auth(anna))
    assert door.status_code == 503, door.text
