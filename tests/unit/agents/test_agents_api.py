"""HTTP endpoints for notes, timeline, directives and identity (real PostgreSQL, real auth)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import SimpleNamespace

import httpx
import pytest
from agent_turns import NOW
from fastapi import FastAPI
from psycopg_pool import AsyncConnectionPool

from novaberg.agents.timeline import repository as timeline_repo
from novaberg.api.agents_api import router
from novaberg.api.auth import TokenCache
from novaberg.config import Settings
from novaberg.store.users import issue_token


@pytest.fixture
async def client(
    db: AsyncConnectionPool, settings: Settings, agent_schema: list[str]
) -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    app.include_router(router)
    app.state.context = SimpleNamespace(pool=db, settings=settings)
    app.state.token_cache = TokenCache(db)
    token = (await issue_token(db, "u1")).token
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport,
        base_url="http://novaberg",
        headers={"Authorization": f"Bearer {token}"},
    ) as http:
        yield http


async def test_requires_token(client: httpx.AsyncClient) -> None:
    response = await client.get("/agents/notes", headers={"Authorization": ""})
    assert response.status_code == 401


async def test_notes_crud(client: httpx.AsyncClient, db: AsyncConnectionPool) -> None:
    created = await client.post(
        "/agents/notes", json={"name": "Einkaufsliste", "typ": "einkauf", "text": "Milch"}
    )
    assert created.status_code == 201
    note = created.json()
    assert note["zusammenfassung"] == "Milch"
    patched = await client.patch(f"/agents/notes/{note['id']}", json={"text": "Milch, Eier"})
    assert patched.json()["text"] == "Milch, Eier"
    assert (
        patched.json()["zusammenfassung"] == "Milch, Eier"
        and patched.json()["name"] == note["name"]
    )
    both = await client.patch(
        f"/agents/notes/{note['id']}", json={"name": "Wocheneinkauf", "text": "Brot"}
    )
    assert (both.json()["name"], both.json()["text"]) == ("Wocheneinkauf", "Brot")
    unchanged = await client.patch(f"/agents/notes/{note['id']}", json={})
    assert unchanged.json() == both.json()
    assert [n["id"] for n in (await client.get("/agents/notes")).json()] == [note["id"]]
    assert (await client.delete(f"/agents/notes/{note['id']}")).status_code == 204
    assert (await client.get("/agents/notes")).json() == []
    archived = (await client.get(f"/agents/notes/{note['id']}")).json()
    assert archived["aktiv"] is False and archived["status"] == "archiviert"
    other = await issue_token(db, "u2")
    foreign = await client.get(
        f"/agents/notes/{note['id']}", headers={"Authorization": f"Bearer {other.token}"}
    )
    assert foreign.status_code == 404


async def test_timeline_bitemporal_patch(client: httpx.AsyncClient) -> None:
    created = await client.post(
        "/agents/timeline",
        json={"title": "Zahnarzt", "event_time": "2030-08-06T14:00:00+02:00"},
    )
    assert created.status_code == 201
    old = created.json()
    assert old["event_time"].startswith("2030-08-06T12:00:00")
    assert old["datum_lokal"] == "06.08.2030 14:00"
    moved = await client.patch(
        f"/agents/timeline/{old['id']}", json={"event_time": "2030-08-07T14:00:00+02:00"}
    )
    new = moved.json()
    assert new["id"] != old["id"] and new["vorgaenger_id"] == old["id"]
    assert new["title"] == "Zahnarzt", "a change of time keeps the title"
    assert (await client.get(f"/agents/timeline/{old['id']}")).json()["aktiv"] is False
    blank = await client.patch(f"/agents/timeline/{new['id']}", json={"title": "  "})
    assert blank.status_code == 422
    renamed = await client.patch(f"/agents/timeline/{new['id']}", json={"title": " Kieferchirurg "})
    assert renamed.status_code == 200
    new = renamed.json()
    assert new["title"] == "Kieferchirurg" and new["datum_lokal"] == "07.08.2030 14:00"
    listed = await client.get(
        "/agents/timeline",
        params={"von": "2030-08-01T00:00:00+00:00", "bis": "2030-08-31T00:00:00+00:00"},
    )
    assert [e["id"] for e in listed.json()] == [new["id"]]
    naive = await client.post(
        "/agents/timeline", json={"title": "X", "event_time": "2030-08-06T14:00:00"}
    )
    assert naive.status_code == 422


async def test_directives_and_identity(client: httpx.AsyncClient, db: AsyncConnectionPool) -> None:
    rule = (await client.post("/agents/directives", json={"anweisung": "Siezen"})).json()
    assert (await client.delete(f"/agents/directives/{rule['id']}")).status_code == 204
    assert (await client.get("/agents/directives")).json() == []
    restored = await client.post(f"/agents/directives/{rule['id']}/reactivate")
    assert restored.json()["aktiv"] is True and restored.json()["geaendert_am"]
    for text in ("Piratin", "Höflich", "Katzenfan"):
        assert (await client.post("/agents/identity", json={"anweisung": text})).status_code == 201
    fourth = await client.post("/agents/identity", json={"anweisung": "Köchin"})
    assert fourth.status_code == 409
    assert len((await client.get("/agents/identity")).json()) == 3
    first = (await client.get("/agents/identity")).json()[0]
    assert (await client.delete(f"/agents/identity/{first['id']}")).status_code == 204
    assert (await client.post("/agents/identity", json={"anweisung": "Köchin"})).status_code == 201
    revived = await client.patch(f"/agents/identity/{first['id']}", json={"anweisung": "Pilotin"})
    assert revived.status_code == 409 and revived.json()["detail"]["fehler"] == "inaktiv"
    assert len((await client.get("/agents/identity")).json()) == 3  # never a fourth


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("post", "/agents/notes", {"name": "Liste\u0000"}, "name"),
        ("post", "/agents/notes", {"name": "   "}, "name"),
        ("post", "/agents/notes", {"name": "L", "themen": ["a\u0000"]}, "themen"),
        ("post", "/agents/notes", {"name": "L", "themen": ["x" * 101]}, "themen"),
        ("post", "/agents/notes", {"name": "L", "text": "a\u0000b"}, "text"),
        (
            "post",
            "/agents/timeline",
            {"title": "Z", "event_time": "9999-12-30T00:00:00Z"},
            "event_time",
        ),
        (
            "post",
            "/agents/timeline",
            {"title": "Z", "event_time": "0001-01-01T00:30:00+01:00"},
            "event_time",
        ),
        ("post", "/agents/timeline", {"title": " ", "event_time": "2030-08-06T14:00:00Z"}, "title"),
        ("post", "/agents/directives", {"anweisung": "Siezen", "kontext": "\u0000"}, "kontext"),
        ("post", "/agents/identity", {"anweisung": "\t\n"}, "anweisung"),
    ],
)
async def test_bad_input_is_a_422_naming_the_field(
    client: httpx.AsyncClient, method: str, path: str, body: dict, field: str
) -> None:
    """Input PostgreSQL cannot store (NUL, dates it cannot shift) or that means nothing
    (blank names) is refused up front, naming the field, and nothing is stored."""
    response = await client.request(method, path, json=body)  # NUL travels as \\u0000
    assert response.status_code == 422, response.text
    assert field in {str(part) for err in response.json()["detail"] for part in err["loc"]}
    assert (await client.get(path)).json() == []


async def test_timeline_patch_with_an_impossible_date_keeps_the_entry(
    client: httpx.AsyncClient,
) -> None:
    entry = await client.post(
        "/agents/timeline", json={"title": "Zahnarzt", "event_time": "2030-08-06T14:00:00Z"}
    )
    moved = await client.patch(
        f"/agents/timeline/{entry.json()['id']}", json={"event_time": "9999-12-31T00:00:00Z"}
    )
    assert moved.status_code == 422
    assert (await client.get(f"/agents/timeline/{entry.json()['id']}")).json()["aktiv"] is True


async def test_openapi_documents_agent_routes(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    for path in ("/agents/notes", "/agents/timeline", "/agents/directives", "/agents/identity"):
        assert path in paths


async def test_timeline_repository_range_is_user_scoped(db: AsyncConnectionPool) -> None:
    await timeline_repo.insert(
        db,
        "u2",
        title="Fremd",
        event_time=NOW,
        event_type="termin",
        details="",
        precision="minute",
        now=NOW,
    )
    assert await timeline_repo.in_range(db, "u1", NOW.replace(hour=0), NOW.replace(hour=23)) == []


async def test_active_items_are_capped_per_user(
    client: httpx.AsyncClient, db: AsyncConnectionPool, settings: Settings
) -> None:
    """Quotas: one more active note, appointment or directive than allowed is a 409
    limit_erreicht; archiving one makes room; another user is not affected."""
    client._transport.app.state.context.settings = settings.model_copy(  # type: ignore[attr-defined]
        update={"max_notes": 2, "max_directives": 2, "max_appointments": 2}
    )
    creates = [
        ("/agents/notes", lambda n: {"name": f"Liste {n}"}, "notes"),
        ("/agents/directives", lambda n: {"anweisung": f"Regel {n}"}, "directives"),
        (
            "/agents/timeline",
            lambda n: {"title": f"Termin {n}", "event_time": f"2031-05-0{n + 1}T10:00:00+02:00"},
            "timeline",
        ),
    ]
    for path, body, _ in creates:
        ids = []
        for n in range(2):
            created = await client.post(path, json=body(n))
            assert created.status_code == 201, created.text
            ids.append(created.json()["id"])
        refused = await client.post(path, json=body(2))
        assert refused.status_code == 409, (path, refused.text)
        assert refused.json()["detail"]["fehler"] == "limit_erreicht"
        assert (await client.delete(f"{path}/{ids[0]}")).status_code == 204
        assert (await client.post(path, json=body(3))).status_code == 201, path
    other = (await issue_token(db, "u2")).token
    note = await client.post(
        "/agents/notes", json={"name": "Eigene"}, headers={"Authorization": f"Bearer {other}"}
    )
    assert note.status_code == 201


async def test_a_restore_cannot_pass_the_directive_limit(
    client: httpx.AsyncClient, db: AsyncConnectionPool, settings: Settings
) -> None:
    """delete → create → reactivate kept more directives active than the limit allows: a
    restore counts like a create (409 limit_erreicht, nothing restored); restoring one
    that is active anyway changes nothing."""
    client._transport.app.state.context.settings = settings.model_copy(  # type: ignore[attr-defined]
        update={"max_directives": 2}
    )
    first = (await client.post("/agents/directives", json={"anweisung": "Regel 0"})).json()
    await client.post("/agents/directives", json={"anweisung": "Regel 1"})
    assert (await client.delete(f"/agents/directives/{first['id']}")).status_code == 204
    assert (
        await client.post("/agents/directives", json={"anweisung": "Regel 2"})
    ).status_code == 201
    refused = await client.post(f"/agents/directives/{first['id']}/reactivate")
    assert refused.status_code == 409, refused.text
    assert refused.json()["detail"]["fehler"] == "limit_erreicht"
    active = (await client.get("/agents/directives")).json()
    assert len(active) == 2 and first["id"] not in {r["id"] for r in active}
    again = await client.post(f"/agents/directives/{active[0]['id']}/reactivate")
    assert again.status_code == 200 and again.json()["aktiv"] is True


async def test_concurrent_restores_stop_at_the_limit(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    """Restores sent at once are counted one after the other (the quota lock): never more
    active directives or identities than allowed, however the requests interleave."""
    client._transport.app.state.context.settings = settings.model_copy(  # type: ignore[attr-defined]
        update={"max_directives": 3}
    )
    for path, limit in (("/agents/identity", 3), ("/agents/directives", 3)):
        ids = []
        for n in range(6):
            created = await client.post(path, json={"anweisung": f"Anweisung {n}"})
            if created.status_code == 201:
                ids.append(created.json()["id"])
                assert (await client.delete(f"{path}/{ids[-1]}")).status_code == 204
        assert len(ids) == 6
        answers = await asyncio.gather(*(client.post(f"{path}/{i}/reactivate") for i in ids))
        assert sorted(a.status_code for a in answers) == [200] * limit + [409] * (6 - limit)
        assert len((await client.get(path)).json()) == limit, path
