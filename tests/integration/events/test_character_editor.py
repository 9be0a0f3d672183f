"""The character editor's API (api/character_editor.py): a card's alternate greetings are
kept and given out; a character is written from scratch, an own one changed and given a
picture; a built-in one is read-only (403), another user's unknown (404); the persona the
next turn reads is the edited one."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import redis.asyncio as aioredis
from event_helpers import Running
from PIL import Image
from psycopg_pool import AsyncConnectionPool

from novaberg.agents.turn_context import read_turn_context
from novaberg.pair import Pair

CARD: dict[str, Any] = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Mira",
        "description": "Eine Kartografin.",
        "first_mes": "Hallo {{user}}, ich bin {{char}}.",
        "alternate_greetings": ["Schon wieder Regen.", "", 7, "Da bist du ja!"],
    },
}


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def picture(kind: str, size: tuple[int, int] = (900, 600)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 40, 90)).save(out, format=kind)
    return out.getvalue()


async def persona(redis: aioredis.Redis, db: AsyncConnectionPool, pair: Pair) -> str:
    now = datetime.now(UTC)
    context = await read_turn_context(
        redis, db, pair, user_turn=True, window=(now, now + timedelta(days=1))
    )
    return context.persona


async def test_alternate_greetings_are_kept_and_given_out(
    server: Running, http: httpx.AsyncClient, token: Callable[[str], Awaitable[str]]
) -> None:
    key = await token("greta")
    imported = await http.post(
        "/characters",
        content=json.dumps(CARD).encode(),
        headers={**auth(key), "Content-Type": "application/json"},
    )
    assert imported.status_code == 201, imported.text
    mira = (await http.get("/characters/mira", headers=auth(key))).json()
    assert mira["erste_nachricht"] == "Hallo {{user}}, ich bin {{char}}."
    assert mira["weitere_begruessungen"] == ["Schon wieder Regen.", "Da bist du ja!"]


async def test_a_written_character_is_own_talked_to_and_its_persona_used(
    server: Running,
    http: httpx.AsyncClient,
    token: Callable[[str], Awaitable[str]],
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
) -> None:
    key = await token("wanda")
    body = {"name": "Lena Berg", "beschreibung": "Eine Gärtnerin.", "erste_nachricht": "Hi!"}
    made = await http.post("/new-character", json=body, headers=auth(key))
    assert made.status_code == 201, made.text
    assert made.json()["character_id"] == "lena-berg"
    assert made.json()["eigen"] is True
    again = await http.post("/new-character", json=body, headers=auth(key))
    assert again.json()["character_id"] == "lena-berg-2"
    listed = (await http.get("/characters", headers=auth(key))).json()["characters"]
    assert {"lena-berg", "lena-berg-2"} <= {c["character_id"] for c in listed}
    assert "Eine Gärtnerin." in await persona(redis, db, Pair("wanda", "lena-berg"))
    sent = await http.post(
        "/chat", json={"character_id": "lena-berg", "text": "Hallo"}, headers=auth(key)
    )
    assert sent.status_code == 202, sent.text


async def test_an_edit_changes_only_the_sent_fields_and_the_next_persona(
    server: Running,
    http: httpx.AsyncClient,
    token: Callable[[str], Awaitable[str]],
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
) -> None:
    key = await token("edda")
    await http.post(
        "/new-character", json={"name": "Olga", "szenario": "Im Zug."}, headers=auth(key)
    )
    pair = Pair("edda", "olga")
    assert "Im Zug." in await persona(redis, db, pair)
    edit = {"name": "Olga Ost", "persoenlichkeit": "trocken, witzig", "erste_nachricht": "Na?"}
    changed = await http.patch("/characters/olga", json=edit, headers=auth(key))
    assert changed.status_code == 200, changed.text
    record = changed.json()
    assert (record["name"], record["persoenlichkeit"], record["erste_nachricht"]) == (
        "Olga Ost",
        "trocken, witzig",
        "Na?",
    )
    assert record["szenario"] == "Im Zug."  # not sent: kept
    now_persona = await persona(redis, db, pair)
    assert "trocken, witzig" in now_persona and "Im Zug." in now_persona


async def test_refusals_are_sentences_shared_read_only_foreign_unknown(
    server: Running, http: httpx.AsyncClient, token: Callable[[str], Awaitable[str]]
) -> None:
    owner, other = await token("ines"), await token("jonas")
    await http.post("/new-character", json={"name": "Pia"}, headers=auth(owner))
    nova = await http.patch("/characters/nova", json={"name": "Not Nova"}, headers=auth(owner))
    assert nova.status_code == 403
    assert nova.json()["detail"]["fehler"] == "character_geteilt"
    assert nova.json()["detail"]["meldung"].endswith(".")
    foreign = await http.patch("/characters/pia", json={"name": "Mine"}, headers=auth(other))
    assert foreign.status_code == 404
    assert foreign.json()["detail"]["fehler"] == "unbekannter_character"
    foreign_pic = await http.put(
        "/characters/pia/avatar",
        json={"bild": base64.b64encode(picture("PNG")).decode()},
        headers=auth(other),
    )
    assert foreign_pic.status_code == 404
    blank = await http.patch("/characters/pia", json={"name": "  "}, headers=auth(owner))
    assert blank.status_code == 422
    assert blank.json()["detail"]["feld"] == "name"
    assert blank.json()["detail"]["meldung"]
    long = await http.patch(
        "/characters/pia", json={"beschreibung": "x" * 20_001}, headers=auth(owner)
    )
    assert (long.status_code, long.json()["detail"]["feld"]) == (422, "beschreibung")
    unchanged = (await http.get("/characters/pia", headers=auth(owner))).json()
    assert (unchanged["name"], unchanged["beschreibung"]) == ("Pia", "")


async def test_an_avatar_is_checked_and_stored_as_a_small_png(
    server: Running, http: httpx.AsyncClient, token: Callable[[str], Awaitable[str]]
) -> None:
    key = await token("karl")
    await http.post("/new-character", json={"name": "Rudi"}, headers=auth(key))
    for kind in ("JPEG", "WEBP", "PNG"):
        sent = await http.put(
            "/characters/rudi/avatar",
            json={"bild": base64.b64encode(picture(kind)).decode()},
            headers=auth(key),
        )
        assert sent.status_code == 204, (kind, sent.text)
        got = await http.get("/characters/rudi/avatar", headers=auth(key))
        assert got.headers["content-type"] == "image/png"
        with Image.open(io.BytesIO(got.content)) as stored:
            assert (stored.format, max(stored.size)) == ("PNG", 512)
    listed = (await http.get("/characters", headers=auth(key))).json()["characters"]
    assert next(c for c in listed if c["character_id"] == "rudi")["avatar"] is True
    gif = io.BytesIO()
    Image.new("RGB", (4, 4)).save(gif, format="GIF")
    for bad in (
        b"<svg xmlns='http://www.w3.org/2000/svg'/>",
        gif.getvalue(),
        b"\x89PNG\r\n\x1a\nbroken",
    ):
        refused = await http.put(
            "/characters/rudi/avatar",
            json={"bild": base64.b64encode(bad).decode()},
            headers=auth(key),
        )
        assert refused.status_code == 422
        assert refused.json()["detail"]["fehler"] == "bild_ungueltig"
    huge = await http.put(
        "/characters/rudi/avatar",
        json={"bild": base64.b64encode(b"\xff\xd8\xff" + b"\0" * 600_000).decode()},
        headers=auth(key),
    )
    assert huge.status_code == 422
    readonly = await http.put(
        "/characters/nova/avatar",
        json={"bild": base64.b64encode(picture("PNG")).decode()},
        headers=auth(key),
    )
    assert readonly.status_code == 403
