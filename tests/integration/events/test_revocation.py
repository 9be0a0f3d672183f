"""A revoked token stops working at once: the next HTTP request is a 401, its open sockets
close with 4401, a new socket is refused — in every API process — while the user's other
tokens keep working. A lookup overtaken by a revocation caches nothing; a process that lost
its subscription distrusts what it cached."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import psycopg
import pytest
import redis.asyncio as aioredis
from event_helpers import WAIT, Socket, post
from psycopg_pool import AsyncConnectionPool
from websockets.asyncio.client import connect

from novaberg.api.auth import TokenCache
from novaberg.cli.tokens import Selection, revoke_selected
from novaberg.events.delivery import Delivery
from novaberg.events.model import StageMessage
from novaberg.store.redis_client import is_cluster
from novaberg.store.users import hash_token, issue_token, list_tokens


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def closed_with(sock: Socket) -> tuple[int | None, str | None]:
    """Wait until the server closed the socket; its close code and reason."""
    await asyncio.wait_for(sock.conn.wait_closed(), WAIT)
    return sock.conn.close_code, sock.conn.close_reason


async def refused_code(ws_url: str, token: str) -> int | None:
    """Open a socket with `token`; the close code the server ends it with at once."""
    async with connect(f"{ws_url}?token={token}") as ws:
        await asyncio.wait_for(ws.wait_closed(), WAIT)
        return ws.close_code


async def still_delivered(sock: Socket, redis: aioredis.Redis, user: str, turn: str) -> None:
    await Delivery(redis).send(
        user,
        StageMessage(character_id="nova", turn_id=turn, node="router", label="x", graph="human"),
    )
    await sock.wait_for(lambda m: m.get("turn_id") == turn)


async def test_delete_token_revokes_it_at_once(
    server: Any, http: httpx.AsyncClient, db: AsyncConnectionPool, redis: aioredis.Redis, sockets
) -> None:
    laptop = await issue_token(db, "anna", "laptop")
    phone = await issue_token(db, "anna", "handy")
    berta = await issue_token(db, "berta", "laptop")
    on_laptop = await sockets(laptop.token)
    on_phone = await sockets(phone.token)
    assert (await http.get("/chat/me", headers=bearer(laptop.token))).status_code == 200

    listed = await http.get("/tokens", headers=bearer(phone.token))
    assert listed.status_code == 200
    assert [(t["id"], t["label"], t["aktuell"]) for t in listed.json()] == [
        (laptop.token_id, "laptop", False),
        (phone.token_id, "handy", True),
    ], "the caller's own tokens only, the calling one marked; never a token or hash"
    assert laptop.token not in listed.text and hash_token(laptop.token) not in listed.text

    foreign = await http.delete(f"/tokens/{berta.token_id}", headers=bearer(phone.token))
    assert foreign.status_code == 404 and foreign.json()["detail"]["fehler"] == "nicht_gefunden"
    assert (await http.get("/chat/me", headers=bearer(berta.token))).status_code == 200

    gone = await http.delete(f"/tokens/{laptop.token_id}", headers=bearer(phone.token))
    assert gone.status_code == 204
    refused = await http.get("/chat/me", headers=bearer(laptop.token))
    assert refused.status_code == 401, "the very next request, though its lookup was cached"
    assert (await post(http, laptop.token, "noch da?")).status_code == 401
    assert await closed_with(on_laptop) == (4401, "token widerrufen")
    assert await refused_code(server.ws_url, laptop.token) == 4401

    assert (await http.get("/chat/me", headers=bearer(phone.token))).status_code == 200
    await still_delivered(on_phone, redis, "anna", "nach-dem-widerruf")
    again = await http.delete(f"/tokens/{laptop.token_id}", headers=bearer(phone.token))
    assert again.status_code == 404


async def test_a_token_may_revoke_itself(server: Any, http: httpx.AsyncClient, token) -> None:
    anna = await token("anna")
    (own,) = (await http.get("/tokens", headers=bearer(anna))).json()
    assert (await http.delete(f"/tokens/{own['id']}", headers=bearer(anna))).status_code == 204
    assert (await http.get("/tokens", headers=bearer(anna))).status_code == 401


@pytest.mark.parametrize(
    "selection",
    [
        Selection(token="TOKEN"),
        Selection(label="laptop", user="anna"),
        Selection(label="laptop"),
        Selection(all_of="anna"),
    ],
    ids=["token", "label of a user", "label", "all of a user"],
)
async def test_the_cli_revocation_reaches_a_running_server_at_once(
    server: Any,
    http: httpx.AsyncClient,
    db: AsyncConnectionPool,
    redis: aioredis.Redis,
    sockets,
    selection: Selection,
) -> None:
    laptop = await issue_token(db, "anna", "laptop")
    berta = await issue_token(db, "berta", "laptop")
    bertas_phone = await issue_token(db, "berta", "handy")
    on_laptop = await sockets(laptop.token)
    on_bertas_phone = await sockets(bertas_phone.token)
    assert (await http.get("/chat/me", headers=bearer(laptop.token))).status_code == 200
    if selection.token:
        selection = Selection(token=laptop.token)

    done = await revoke_selected(db, redis, selection)

    expected = {"anna": 1, "berta": 1} if selection.label and not selection.user else {"anna": 1}
    assert (done.per_user, done.announced) == (expected, True)
    assert await closed_with(on_laptop) == (4401, "token widerrufen")
    assert (await http.get("/chat/me", headers=bearer(laptop.token))).status_code == 401
    assert await refused_code(server.ws_url, laptop.token) == 4401
    bertas = await http.get("/chat/me", headers=bearer(berta.token))
    assert bertas.status_code == (401 if "berta" in expected else 200)
    assert (await http.get("/chat/me", headers=bearer(bertas_phone.token))).status_code == 200
    await still_delivered(on_bertas_phone, redis, "berta", "weiter")
    nothing = await revoke_selected(db, redis, selection)
    assert nothing.count == 0


async def test_another_api_process_hears_the_revocation(
    server: Any, http: httpx.AsyncClient, db: AsyncConnectionPool, api_process
) -> None:
    """`novaberg api` as shipped, beside the test's app: a DELETE on one process closes the
    token's socket on the other, whose next request with it is a 401 although it had the
    token cached (its cache lives 30 s)."""
    other_url, _ = api_process()
    laptop = await issue_token(db, "anna", "laptop")
    phone = await issue_token(db, "anna", "handy")
    other_ws = other_url.replace("http://", "ws://") + "/ws"
    elsewhere = Socket(await connect(f"{other_ws}?token={laptop.token}"))
    phone_elsewhere = Socket(await connect(f"{other_ws}?token={phone.token}"))
    try:
        await elsewhere.wait_typ("verbindung")
        await phone_elsewhere.wait_typ("verbindung")
        async with httpx.AsyncClient(base_url=other_url, timeout=WAIT) as other:
            assert (await other.get("/chat/me", headers=bearer(laptop.token))).status_code == 200
            deleted = await http.delete(f"/tokens/{laptop.token_id}", headers=bearer(phone.token))
            assert deleted.status_code == 204
            assert await closed_with(elsewhere) == (4401, "token widerrufen")
            assert (await other.get("/chat/me", headers=bearer(laptop.token))).status_code == 401
            assert await refused_code(other_ws, laptop.token) == 4401
            assert (await other.get("/chat/me", headers=bearer(phone.token))).status_code == 200
            assert phone_elsewhere.conn.close_code is None, "the other token's socket stays"
    finally:
        await elsewhere.close()
        await phone_elsewhere.close()


async def test_a_lookup_overtaken_by_a_revocation_is_not_trusted(
    db: AsyncConnectionPool, endpoints: Any
) -> None:
    """The database answered from before the revocation (here: held up by a lock until the
    announcement arrived): the answer is refused and nothing is cached."""
    anna = await issue_token(db, "anna", "laptop")
    cache = TokenCache(db)
    with psycopg.connect(endpoints.database_url) as locker:
        locker.execute("LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE")
        lookup = asyncio.create_task(cache.identify(anna.token))
        await _until_a_query_waits_for_a_lock(db)
        cache.revoke([hash_token(anna.token)])
        locker.rollback()  # the row is still there: the answer the lookup gets says "anna"
        assert await asyncio.wait_for(lookup, WAIT) == (None, hash_token(anna.token))
    async with db.connection() as conn:  # deleted without an announcement
        await conn.execute(
            "DELETE FROM api_tokens WHERE token_hash = %s", (hash_token(anna.token),)
        )
    assert await cache.user_for(anna.token) is None, "the stale answer was not cached"


async def test_a_lookup_overtaken_by_another_revocation_is_answered_uncached(
    db: AsyncConnectionPool, endpoints: Any
) -> None:
    anna = await issue_token(db, "anna", "laptop")
    cache = TokenCache(db)
    with psycopg.connect(endpoints.database_url) as locker:
        locker.execute("LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE")
        lookup = asyncio.create_task(cache.identify(anna.token))
        await _until_a_query_waits_for_a_lock(db)
        cache.revoke(["0" * 64])
        locker.rollback()
        assert (await asyncio.wait_for(lookup, WAIT))[0] == "anna"
    async with db.connection() as conn:
        await conn.execute(
            "DELETE FROM api_tokens WHERE token_hash = %s", (hash_token(anna.token),)
        )
    assert await cache.user_for(anna.token) is None


async def _until_a_query_waits_for_a_lock(db: AsyncConnectionPool) -> None:
    async def waiting() -> None:
        while True:
            async with db.connection() as conn:
                cur = await conn.execute(
                    "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND query LIKE %s",
                    ("%FROM api_tokens%",),
                )
                row: Any = await cur.fetchone()
            if row["n"]:
                return
            await asyncio.sleep(0.02)

    await asyncio.wait_for(waiting(), WAIT)


async def test_after_a_lost_subscription_nothing_cached_is_trusted(
    server: Any, http: httpx.AsyncClient, db: AsyncConnectionPool, redis: aioredis.Redis, sockets
) -> None:
    """A revocation announced while the hub was not listening is missed; once it listens
    again it forgets its token cache and re-checks its open sockets' tokens."""
    laptop = await issue_token(db, "anna", "laptop")
    phone = await issue_token(db, "anna", "handy")
    on_laptop = await sockets(laptop.token)
    on_phone = await sockets(phone.token)
    assert (await http.get("/chat/me", headers=bearer(laptop.token))).status_code == 200
    async with db.connection() as conn:  # revoked while nobody listened
        await conn.execute("DELETE FROM api_tokens WHERE token_id = %s", (laptop.token_id,))
    assert (await http.get("/chat/me", headers=bearer(laptop.token))).status_code == 200, (
        "unannounced: still cached"
    )

    everywhere = {"target_nodes": "all"} if is_cluster(redis) else {}  # the hub's node
    await redis.execute_command("CLIENT", "KILL", "TYPE", "pubsub", **everywhere)

    assert await closed_with(on_laptop) == (4401, "token widerrufen")
    assert (await http.get("/chat/me", headers=bearer(laptop.token))).status_code == 401
    assert [t.token_id for t in await list_tokens(db, "anna")] == [phone.token_id]
    await still_delivered(on_phone, redis, "anna", "nach-der-pause")
