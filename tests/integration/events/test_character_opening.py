"""A card greeting the person answers becomes the conversation's opening (in the history and
in the session the model reads), once; the chats imported for a character are readable as
the conversation's beginning (GET /history/{id}/importiert), speakers named, in order."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import httpx
import redis.asyncio as aioredis
from event_helpers import Running

from novaberg.pair import Pair
from novaberg.store import keys

CARD = {
    "spec": "chara_card_v3",
    "spec_version": "3.0",
    "data": {
        "name": "Tove",
        "first_mes": "Hej {{user}}!",
        "alternate_greetings": ["Na, {{user}}? Hier ist {{char}}.", "Guten Morgen."],
    },
}

SILLYTAVERN = [
    {"user_name": "Kai", "character_name": "Tove", "create_date": "2024-06-20@15h45m00s"},
    {"name": "Kai", "is_user": True, "send_date": "June 20, 2024 3:45pm", "mes": "Hallo Tove"},
    {"name": "Tove", "is_user": False, "send_date": "June 20, 2024 3:46pm", "mes": "Hej Kai!"},
    {"name": "Kai", "is_user": True, "send_date": "June 20, 2024 3:47pm", "mes": "Wie geht's?"},
]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def import_tove(http: httpx.AsyncClient, key: str) -> None:
    made = await http.post(
        "/characters",
        content=json.dumps(CARD).encode(),
        headers={**auth(key), "Content-Type": "application/json"},
    )
    assert made.status_code == 201, made.text


async def test_the_answered_greeting_is_the_opening_once(
    server: Running,
    http: httpx.AsyncClient,
    token: Callable[[str], Awaitable[str]],
    redis: aioredis.Redis,
) -> None:
    key = await token("lotta")
    await import_tove(http, key)
    assert (await http.get("/history/tove", headers=auth(key))).json()["eintraege"] == []
    kept = await http.post("/characters/tove/opening", json={"begruessung": 1}, headers=auth(key))
    assert kept.status_code == 200, kept.text
    assert kept.json() == {"gespeichert": True, "text": "Na, lotta? Hier ist Tove."}
    history = (await http.get("/history/tove", headers=auth(key))).json()["eintraege"]
    assert [(e["eingabe"], e["nachricht"], e["reiz_herkunft"]) for e in history] == [
        ("", "Na, lotta? Hier ist Tove.", "eroeffnung")
    ]
    session = await redis.lrange(keys.session_turns(Pair("lotta", "tove")), 0, -1)
    turns = [json.loads(item) for item in session]
    assert [(t["rolle"], t["inhalt"]) for t in turns] == [
        ("assistant", "Na, lotta? Hier ist Tove.")
    ]
    again = await http.post("/characters/tove/opening", json={"begruessung": 0}, headers=auth(key))
    assert again.json()["gespeichert"] is False  # begun already: one opening
    assert len((await http.get("/history/tove", headers=auth(key))).json()["eintraege"]) == 1
    missing = await http.post(
        "/characters/tove/opening", json={"begruessung": 3}, headers=auth(key)
    )
    assert missing.status_code == 422
    flag = await http.post(
        "/characters/tove/opening", json={"begruessung": False}, headers=auth(key)
    )
    assert flag.status_code == 422  # a boolean is no greeting's number
    other = await token("mats")
    foreign = await http.post(
        "/characters/tove/opening", json={"begruessung": 0}, headers=auth(other)
    )
    assert foreign.status_code == 404


async def test_an_imported_chat_is_the_conversations_beginning(
    server: Running, http: httpx.AsyncClient, token: Callable[[str], Awaitable[str]]
) -> None:
    key = await token("kai")
    await import_tove(http, key)
    body = "\n".join(json.dumps(line) for line in SILLYTAVERN).encode()
    done = await http.post(
        "/import/chat", params={"character": "tove"}, content=body, headers=auth(key)
    )
    assert done.status_code == 200, done.text
    page = (await http.get("/history/tove/importiert?limit=2", headers=auth(key))).json()
    assert [(e["sprecher"], e["name"], e["text"]) for e in page["eintraege"]] == [
        ("character", "Tove", "Hej Kai!"),
        ("user", "Kai", "Wie geht's?"),
    ]
    assert page["weitere"] is True and page["eintraege"][0]["quelle"] == "sillytavern"
    older = await http.get(
        f"/history/tove/importiert?limit=2&vor={page['eintraege'][0]['id']}", headers=auth(key)
    )
    assert [e["text"] for e in older.json()["eintraege"]] == ["Hallo Tove"]
    assert older.json()["weitere"] is False
    other = await token("nils")
    assert (await http.get("/history/tove/importiert", headers=auth(other))).json() == {
        "eintraege": [],
        "weitere": False,
    }
