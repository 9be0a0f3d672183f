"""The intake only accepts: validate, stamp, enqueue, answer. Bad input is a 4xx naming
the problem with nothing enqueued; every call is authenticated."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import post
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from novaberg.events.model import MAX_PROMPT_BYTES, QueuedUtterance
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("anna", "nova")

CONCURRENT = 40
"""Requests sent at once by one token: within its burst (NOVABERG_CHAT_BURST, 50)."""


async def test_accepted_message_is_stamped_and_queued_without_a_model_call(
    http: httpx.AsyncClient, token, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    before = time.time()
    response = await post(http, anna, "  Hallo Nova  ", client_id="tab-1")
    assert response.status_code == 202, response.text
    body = response.json()
    assert set(body) == {"nachrichten_id", "empfangen_am"}
    assert before <= body["empfangen_am"] <= time.time()
    queued = await redis.lrange(keys.prompt_queue(PAIR), 0, -1)
    assert len(queued) == 1
    entry = QueuedUtterance.model_validate_json(queued[0])
    assert (entry.message_id, entry.text, entry.client_id) == (
        body["nachrichten_id"],
        "Hallo Nova",
        "tab-1",
    )
    assert entry.received_at == body["empfangen_am"]
    assert await redis.sismember(keys.active_pairs(), "anna:nova")
    assert 0 < await redis.ttl(keys.prompt_queue(PAIR)) <= keys.QUEUE_TTL
    assert scripted.calls == [], "the intake never calls the model"


async def test_concurrent_messages_are_all_stored_once(
    http: httpx.AsyncClient, token, redis: aioredis.Redis
) -> None:
    """Requests arriving while a write is in flight share the next script call; each is
    answered 202 only with its own entry stored."""
    anna = await token("anna")
    responses = await asyncio.gather(
        *(post(http, anna, f"Nachricht {n}") for n in range(CONCURRENT))
    )
    assert [r.status_code for r in responses] == [202] * CONCURRENT
    queued = [
        QueuedUtterance.model_validate_json(raw)
        for raw in await redis.lrange(keys.prompt_queue(PAIR), 0, -1)
    ]
    assert sorted(e.message_id for e in queued) == sorted(
        r.json()["nachrichten_id"] for r in responses
    )
    assert sorted(e.text for e in queued) == sorted(f"Nachricht {n}" for n in range(CONCURRENT))


async def test_writes_arriving_during_a_write_share_one_script_call(
    endpoints, redis: aioredis.Redis
) -> None:
    from novaberg.events.intake import CharacterCache, Intake, intake_redis

    client = intake_redis(endpoints.redis_url, cluster=endpoints.redis_cluster)
    calls = 0
    run = client.run

    async def counted(*args, **kwargs):
        nonlocal calls
        calls += 1
        return await run(*args, **kwargs)

    # each write: activate the pairs, queue (one call per user: one hash slot), wake

    client.run = counted  # type: ignore[method-assign]

    async def characters(user_id: str) -> set[str]:
        return {"nova", "lumen"}

    intake = Intake(client, CharacterCache(characters))
    try:
        accepted = await asyncio.gather(
            *(intake.accept("anna", ("nova", "lumen")[n % 2], f"Satz {n}") for n in range(50))
        )
    finally:
        await client.aclose()
    assert calls == 2 * 3, "the first is written inline, the 49 behind it in one drain write"
    for character in ("nova", "lumen"):
        queued = await redis.lrange(keys.prompt_queue(Pair("anna", character)), 0, -1)
        texts = [QueuedUtterance.model_validate_json(raw).text for raw in queued]
        start = 0 if character == "nova" else 1
        assert texts == [f"Satz {n}" for n in range(start, 50, 2)], "order kept per pair"
    assert len({a.message_id for a in accepted}) == 50
    assert await redis.smembers(keys.active_pairs()) == {"anna:nova", "anna:lumen"}


BAD_BODIES = [
    ("empty text", {"character_id": "nova", "text": ""}, 422, "text_leer"),
    ("blank text", {"character_id": "nova", "text": " \n\t "}, 422, "text_leer"),
    ("nul in text", {"character_id": "nova", "text": "Hallo\u0000"}, 422, "text_ungueltig"),
    (
        "too long",
        {"character_id": "nova", "text": "ä" * (MAX_PROMPT_BYTES // 2 + 1)},
        413,
        "text_zu_lang",
    ),
    ("unknown character", {"character_id": "niemand", "text": "Hallo"}, 404, "charakter_unbekannt"),
    ("missing text", {"character_id": "nova"}, 422, "eingabe_ungueltig"),
    ("missing character", {"text": "Hallo"}, 422, "eingabe_ungueltig"),
    ("text not a string", {"character_id": "nova", "text": 5}, 422, "eingabe_ungueltig"),
    ("unknown field", {"character_id": "nova", "text": "Hallo", "x": 1}, 422, "eingabe_ungueltig"),
    (
        "bad client id",
        {"character_id": "nova", "text": "Hallo", "client_id": ""},
        422,
        "client_id_ungueltig",
    ),
]

BAD_RAW = [
    ("invalid utf-8", b'{"character_id": "nova", "text": "\xff\xfe"}', 400, "utf8_ungueltig"),
    ("lone surrogate", b'{"character_id": "nova", "text": "\\ud800"}', 400, "utf8_ungueltig"),
    ("not json", b"Hallo Nova", 400, "json_ungueltig"),
    ("json array", b'["nova", "Hallo"]', 422, "eingabe_ungueltig"),
    (
        "huge body",
        b'{"character_id": "nova", "text": "' + b"a" * 200_000 + b'"}',
        413,
        "text_zu_lang",
    ),
]


@pytest.mark.parametrize(
    ("case", "body", "status", "code"), BAD_BODIES, ids=[c[0] for c in BAD_BODIES]
)
async def test_bad_input_is_a_4xx_and_nothing_is_queued(
    http: httpx.AsyncClient,
    token,
    redis: aioredis.Redis,
    case: str,
    body: dict,
    status: int,
    code: str,
) -> None:
    anna = await token("anna")
    response = await http.post("/chat", json=body, headers={"Authorization": f"Bearer {anna}"})
    assert response.status_code == status, response.text
    assert response.json()["fehler"] == code
    assert response.json()["detail"]
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0
    assert not await redis.exists(keys.active_pairs())


@pytest.mark.parametrize(("case", "raw", "status", "code"), BAD_RAW, ids=[c[0] for c in BAD_RAW])
async def test_bad_bytes_are_a_4xx_and_nothing_is_queued(
    http: httpx.AsyncClient,
    token,
    redis: aioredis.Redis,
    case: str,
    raw: bytes,
    status: int,
    code: str,
) -> None:
    anna = await token("anna")
    response = await http.post(
        "/chat",
        content=raw,
        headers={"Authorization": f"Bearer {anna}", "Content-Type": "application/json"},
    )
    assert response.status_code == status, response.text
    assert response.json()["fehler"] == code
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0
    assert not await redis.exists(keys.active_pairs())


async def test_exactly_16_kib_is_accepted(http: httpx.AsyncClient, token) -> None:
    anna = await token("anna")
    response = await post(http, anna, "ä" * (MAX_PROMPT_BYTES // 2))
    assert response.status_code == 202, response.text


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer nvb_falsch"}, {"Authorization": "Basic YTpi"}],
    ids=["no token", "unknown token", "wrong scheme"],
)
async def test_every_call_needs_a_valid_token(
    http: httpx.AsyncClient, redis: aioredis.Redis, headers: dict
) -> None:
    response = await http.post(
        "/chat", content=json.dumps({"character_id": "nova", "text": "Hallo"}), headers=headers
    )
    assert response.status_code == 401
    assert response.json()["fehler"] in {"token_fehlt", "token_ungueltig"}
    assert response.headers["www-authenticate"] == "Bearer"
    assert not await redis.exists(keys.active_pairs())
    me = await http.get("/chat/me", headers=headers)
    assert me.status_code == 401
    assert me.json()["detail"]["fehler"] in {"token_fehlt", "token_ungueltig"}


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("", 4401),
        ("?token=nvb_falsch", 4401),
        ("?token=nvb_falsch&since=abc", 4400),
        ("?token=nvb_falsch&since=-1", 4400),
        ("?token=nvb_falsch&client_id=" + "x" * 65, 4400),
    ],
    ids=["no token", "unknown token", "since not a number", "since negative", "long client_id"],
)
async def test_websocket_refusals_carry_a_close_code(server, query: str, code: int) -> None:
    """Refused after the handshake, so a browser sees why (4401: ask for a token)."""
    async with connect(f"{server.ws_url}{query}") as ws:
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(ws.recv(), 10)
    assert info.value.rcvd is not None and info.value.rcvd.code == code
    assert info.value.rcvd.reason


async def test_token_lookups_are_cached(http: httpx.AsyncClient, server, token, db) -> None:
    """A second request does not need the database: a row deleted without announcing it
    takes effect when the cache entry expires (TOKEN_CACHE_SECONDS), here forced by
    clearing the cache. (Announced revocations act at once: test_revocation.py.)"""
    from novaberg.store.users import revoke_all

    anna = await token("anna")
    assert (await post(http, anna, "eins")).status_code == 202
    await revoke_all(db, "anna")
    assert (await post(http, anna, "zwei")).status_code == 202
    server.app.state.token_cache.forget()
    assert (await post(http, anna, "drei")).status_code == 401


async def test_page_carries_the_local_token_and_assets(http: httpx.AsyncClient, server) -> None:
    page = await http.get("/")
    assert page.status_code == 200
    token = server.app.state.chat.page_token
    assert token and f'content="{token}"' in page.text
    me = await http.get("/chat/me", headers={"Authorization": f"Bearer {token}"})
    assert me.json()["user_id"] == "meister"
    assert (await http.get("/web/app.js")).headers["content-type"].startswith("text/javascript")
    assert (await http.get("/web/style.css")).status_code == 200
    assert (await http.get("/web/../config.py")).status_code == 404
    proxied = await http.get("/", headers={"X-Forwarded-For": "203.0.113.9"})
    assert token not in proxied.text, "behind a proxy every peer looks local: no token"
    foreign_host = await http.get("/", headers={"Host": "chat.example.org"})
    assert token not in foreign_host.text


async def test_unreachable_queue_is_a_503_and_nothing_is_accepted(
    http: httpx.AsyncClient, server, token, redis: aioredis.Redis
) -> None:
    """The intake answers 202 only after its utterance is stored."""
    from novaberg.events.intake import Intake, intake_redis

    anna = await token("anna")
    chat = server.app.state.chat
    working = chat.intake
    dead = intake_redis("redis://127.0.0.1:1")  # nothing listens there
    chat.intake = Intake(dead, working.characters)
    try:
        response = await post(http, anna, "Hallo")
    finally:
        chat.intake = working
        await dead.aclose()
    assert response.status_code == 503, response.text
    assert response.json()["fehler"] == "speicher_nicht_erreichbar"
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0
    assert (await post(http, anna, "Hallo")).status_code == 202


async def test_chat_is_documented(http: httpx.AsyncClient) -> None:
    """`POST /chat` is answered ahead of the framework but still listed in the OpenAPI."""
    spec = (await http.get("/openapi.json")).json()
    operation = spec["paths"]["/chat"]["post"]
    assert {"202", "401", "413", "422"} <= set(operation["responses"])


async def test_a_server_app_hides_its_startup_heap_from_the_collector(
    settings, endpoints, redis: aioredis.Redis, db, model, gate
) -> None:
    """`freeze_heap` (novaberg serve/api): a full collection no longer walks the startup
    heap, so it cannot stall the intake for tens of milliseconds."""
    import gc

    from novaberg.api.app import create_app
    from novaberg.api.context import AppContext

    app = create_app(
        context=AppContext(settings, endpoints, redis, db, model, gate), freeze_heap=True
    )
    gc.unfreeze()
    try:
        async with app.router.lifespan_context(app):
            assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


async def test_requests_waiting_for_a_character_reload_share_it() -> None:
    """A stale cache is re-read once, not once per request that arrived during the read."""
    from novaberg.events.intake import CharacterCache

    loads = 0
    release = asyncio.Event()

    async def load(user_id: str) -> set[str]:
        nonlocal loads
        loads += 1
        await release.wait()
        return {"nova"}

    cache = CharacterCache(load)
    waiting = [asyncio.create_task(cache.known("anna", c)) for c in ("nova", "nova", "niemand")]
    await asyncio.sleep(0)
    release.set()
    assert await asyncio.gather(*waiting) == [True, True, False]
    assert loads == 1


async def test_the_character_cache_holds_each_users_own_characters() -> None:
    """Per user: one user's character is unknown to another; a character created in this
    process is known at once (even while a read that missed it is under way), a deleted
    one is refused at once; the least recently asked user is dropped beyond the bound."""
    from novaberg.events.intake import CharacterCache

    owned = {"anna": {"nova", "kaethe"}, "bert": {"nova"}, "cora": {"nova"}}
    loads: list[str] = []
    held = asyncio.Event()
    held.set()

    async def load(user_id: str) -> set[str]:
        loads.append(user_id)
        await held.wait()
        return set(owned[user_id])

    cache = CharacterCache(load, max_users=2)
    assert await cache.known("anna", "kaethe") and not await cache.known("bert", "kaethe")
    assert loads == ["anna", "bert"]

    owned["anna"].discard("kaethe")
    cache.discard("anna", "kaethe")
    assert not await cache.known("anna", "kaethe"), "deleted here: refused at once"
    owned["bert"].add("pirat")
    cache.add("bert", "pirat")
    assert await cache.known("bert", "pirat"), "created here: no wait for the recheck"
    assert loads == ["anna", "bert"], "neither needed a read"

    assert await cache.known("cora", "nova")  # a third user: anna, asked least lately, goes
    assert loads == ["anna", "bert", "cora"]
    assert await cache.known("bert", "pirat") and loads[-1] == "cora", "bert is still held"
    assert not await cache.known("anna", "kaethe") and loads[-1] == "anna", "anna read again"

    fresh = CharacterCache(load)  # a read that started before a creation must not lose it
    held.clear()
    reading = asyncio.create_task(fresh.known("cora", "nova"))
    await asyncio.sleep(0)
    fresh.add("cora", "neu")  # the read looked before the row was written: it misses it
    held.set()
    assert await reading
    assert await fresh.known("cora", "neu")


async def _raw_request(url: str, head: str, body_chunks: list[bytes]) -> bytes:
    """Send a request over a raw socket (as much of the body as the server takes) and
    return what the server answered before it closed the connection."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(head.encode())
    try:
        for chunk in body_chunks:
            writer.write(chunk)
            await writer.drain()
    except ConnectionError:
        pass  # the server stopped reading: what matters is its answer
    try:
        answer = await asyncio.wait_for(reader.read(4096), 10)
    except ConnectionError:
        answer = b""
    writer.close()
    return answer


async def test_oversized_bodies_are_refused_on_every_route(
    http: httpx.AsyncClient, server, token
) -> None:
    """The FastAPI routes refuse a body over 1 MiB, declared (at once, unread) or streamed
    (as soon as it passes the limit): 413, and the connection is closed."""
    from novaberg.api.request_guard import MAX_REQUEST_BYTES

    anna = await token("anna")
    headers = {"Authorization": f"Bearer {anna}"}
    declared = await _raw_request(
        server.url,
        f"POST /agents/notes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {anna}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {MAX_REQUEST_BYTES + 1}\r\n\r\n",
        [],  # not a byte of the body: the answer must not wait for it
    )
    assert declared.startswith(b"HTTP/1.1 413"), declared[:200]
    assert b"zu_gross" in declared and b"connection: close" in declared.lower()
    chunk = b"%x\r\n%s\r\n" % (65_536, b"x" * 65_536)
    streamed = await _raw_request(
        server.url,
        f"POST /agents/notes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {anna}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        [b'b\r\n{"name": "x\r\n'] + [chunk] * 40,
    )
    assert streamed.startswith(b"HTTP/1.1 413"), streamed[:200]
    assert (await http.get("/agents/notes", headers=headers)).json() == []
    small = await http.post("/agents/notes", json={"name": "Liste"}, headers=headers)
    assert small.status_code == 201


async def test_a_request_without_a_token_is_refused_before_its_body(server) -> None:
    """401 at once, the body unread (a 200 MB body is never received), for the intake and
    for the other routes."""
    for path in ("/chat", "/agents/notes"):
        answer = await _raw_request(
            server.url,
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 200000000\r\n\r\n",
            [],
        )
        assert answer.startswith(b"HTTP/1.1 401"), (path, answer[:200])
        assert b"token_fehlt" in answer and b"connection: close" in answer.lower()
