"""The offer chain end to end — the real app, queues, consumers, graphs and WebSocket, the
scripted model playing a perfect decision (seed 002 §3.2; docs/behaviour/agents.md#offers):

Nova offers "Soll ich dir Brot auf die Liste setzen?" → "ja" → exactly that item is written;
"ja" with no offer open writes nothing; "nein" writes nothing and closes the offer; an offer
that expired executes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import WAIT, Socket, post, script_answer
from psycopg_pool import AsyncConnectionPool

from novaberg.agents.registry import discover_agents
from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

OFFER_SENTENCE = "Soll ich dir Brot auf die Liste setzen?"
OFFER_ANSWER = f"Oh je, ohne Brot ist doof. {OFFER_SENTENCE}"
EMPTY = "Mir ist das Brot ausgegangen."
DONE = "Erledigt – Brot steht jetzt auf deiner Einkaufsliste."
NOTHING_OPEN = "Worauf bezieht sich dein Ja? Gerade habe ich dir nichts angeboten."
NOT_THEN = "Okay, dann nicht."
CLS = "NotesClassification"


@pytest.fixture
async def runtime(
    settings: Settings, redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> AsyncIterator[GraphRuntime]:
    """The workers' runtime with the task agents registered, as `novaberg serve` runs it."""
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model)
    yield GraphRuntime(deps, registry=discover_agents())
    assert deps.log is not None
    await deps.log.close()


def script_offer(scripted: ScriptedLLM) -> None:
    """A perfect model: the situation sees the bread, the composer offers it, the responder
    asks it, and the notes classifier reads the offer's blocks as "add Brot"."""
    script_answer(scripted, "Alles klar.")
    scripted.add(
        rf"\[AKTUELLER PROMPT\]\n{EMPTY}",
        {
            "gegenstand": "Einkauf",
            "objekte": [{"name": "Brot", "eigenschaften": {}, "offen": []}],
            "objekt_bezug": "Brot",
        },
        schema="SituationReading",
    )
    scripted.add(
        r"(?s)Du bereitest den Inhalt einer Antwort vor.*\[ANGEBOT\]\n.*- notizen: ",
        "EINWAND: nein\nGEPRUEFT: nichts zu prüfen\nBEWERTUNG: trifft_zu\nSTAERKE: 0.9\n"
        f"QUELLE: haltung\nANGEBOT: notizen | Brot | {OFFER_SENTENCE}\n---\n"
        "Person B bedauert das und bietet an, Brot auf die Einkaufsliste zu setzen.",
    )
    scripted.add(r"(?s)bietet an, Brot.*Antworte kurz und natürlich", OFFER_ANSWER)
    scripted.add(r"(?s)- notizen: .*Antworte kurz und natürlich", DONE)
    scripted.add(
        r"(?s)Du bereitest den Inhalt.*\[ZUSTIMMUNG\]\nPerson A sagt „ja“. Es ist kein Angebot",
        "EINWAND: nein\nGEPRUEFT: nichts\nBEWERTUNG: trifft_zu\nSTAERKE: 0.9\nQUELLE: haltung\n---\n"
        "Person B sagt, dass gerade nichts offen ist, und fragt, was Person A meint.",
    )
    scripted.add(r"(?s)nichts offen ist.*Antworte kurz und natürlich", NOTHING_OPEN)
    scripted.add(r"(?s)Antworte kurz und natürlich.*\[AKTUELLER PROMPT\]\nnein$", NOT_THEN)
    scripted.add(
        r"(?s)\[OBJEKT\]\nDie Sache des Angebots: Brot\n.*"
        rf"\[ZUSTIMMUNG\]\nNova hat angeboten: „{OFFER_SENTENCE.replace('?', '[?]')}“",
        {
            "action": "add_content",
            "target": "Einkaufsliste",
            "elemente": ["Brot"],
            "normalisiert": "add_content: Brot zu Notiz 'Einkaufsliste' hinzufuegen",
        },
        schema=CLS,
    )


async def setup(http: httpx.AsyncClient, token: Any, sockets: Any, user: str) -> tuple[str, Socket]:
    """The person's token, socket and shopping list ("Milch")."""
    secret = await token(user)
    made = await http.post(
        "/agents/notes",
        json={"name": "Einkaufsliste", "typ": "einkauf", "text": "Milch"},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert made.status_code == 201, made.text
    return secret, await sockets(secret)


async def say(http: httpx.AsyncClient, secret: str, ws: Socket, text: str) -> dict[str, Any]:
    """Send `text`; return Nova's answer once the turn's post-run (dispatcher) is done."""
    accepted = await post(http, secret, text)
    assert accepted.status_code == 202, accepted.text
    message_id = accepted.json()["nachrichten_id"]
    answer = await ws.wait_for(
        lambda m: (
            m.get("typ") == "character_response" and message_id in (m.get("nachrichten_ids") or [])
        )
    )
    await ws.wait_for(
        lambda m: (
            m.get("typ") == "character_stage"
            and m.get("turn_id") == answer["turn_id"]
            and m.get("graph") == "character"
            and m.get("node") == "dispatcher"
        )
    )
    return answer


async def notes(http: httpx.AsyncClient, secret: str) -> list[tuple[str, str]]:
    got = await http.get("/agents/notes", headers={"Authorization": f"Bearer {secret}"})
    assert got.status_code == 200, got.text
    return [(row["name"], row["text"]) for row in got.json()]


def transcript(ws: Socket) -> list[str]:
    """The conversation as the socket saw it (printed for the report)."""
    lines = [
        f"{m['typ']}: {m.get('nachricht') or m.get('grund')}"
        for m in ws.seen
        if m.get("typ") in ("character_response", "turn_gescheitert")
    ]
    print("\n".join(lines))
    return lines


def calls(scripted: ScriptedLLM, schema: str) -> list[str]:
    return [c["prompt"] for c in scripted.calls if c["schema"] == schema]


async def test_nova_offers_bread_and_a_yes_puts_exactly_bread_on_the_list(
    http: httpx.AsyncClient,
    token: Any,
    sockets: Any,
    workers: Any,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    script_offer(scripted)
    secret, ws = await setup(http, token, sockets, "anna")
    await workers()

    offered = await say(http, secret, ws, EMPTY)
    assert offered["nachricht"] == OFFER_ANSWER
    bound = await redis.get(keys.offer(Pair("anna", "nova")))
    assert bound is not None and OFFER_SENTENCE in bound and '"dienst": "notizen"' in bound
    assert await notes(http, secret) == [("Einkaufsliste", "Milch")], "an offer writes nothing"
    routed = len(calls(scripted, "RouterDecision"))

    await say(http, secret, ws, "ja")
    assert await notes(http, secret) == [("Einkaufsliste", "Milch, Brot")]
    assert len(calls(scripted, CLS)) == 1, "exactly the offered agent ran, once"
    assert len(calls(scripted, "RouterDecision")) == routed, "a yes needs no routing call"
    assert not await redis.exists(keys.offer(Pair("anna", "nova"))), "the offer is consumed"
    assert transcript(ws) == [f"character_response: {OFFER_ANSWER}", f"character_response: {DONE}"]


async def test_a_yes_with_no_offer_open_executes_nothing(
    http: httpx.AsyncClient,
    token: Any,
    sockets: Any,
    workers: Any,
    scripted: ScriptedLLM,
) -> None:
    script_offer(scripted)
    secret, ws = await setup(http, token, sockets, "bert")
    await workers()

    await say(http, secret, ws, "ja")
    assert await notes(http, secret) == [("Einkaufsliste", "Milch")]
    assert calls(scripted, CLS) == [] and calls(scripted, "RouterDecision") == []
    assert transcript(ws) == [f"character_response: {NOTHING_OPEN}"]


async def test_a_no_writes_nothing_and_closes_the_offer(
    http: httpx.AsyncClient,
    token: Any,
    sockets: Any,
    workers: Any,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    script_offer(scripted)
    secret, ws = await setup(http, token, sockets, "carla")
    await workers()

    await say(http, secret, ws, EMPTY)
    assert await redis.exists(keys.offer(Pair("carla", "nova")))
    await say(http, secret, ws, "nein")
    assert not await redis.exists(keys.offer(Pair("carla", "nova"))), "a no closes the offer"
    offers = [p for p in calls(scripted, None) if "[ANGEBOT]" in p]
    assert len(offers) == 1, "after a no Nova does not offer the same again"
    await say(http, secret, ws, "ja")
    assert await notes(http, secret) == [("Einkaufsliste", "Milch")]
    assert calls(scripted, CLS) == []
    assert transcript(ws) == [
        f"character_response: {OFFER_ANSWER}",
        f"character_response: {NOT_THEN}",
        f"character_response: {NOTHING_OPEN}",
    ]


async def test_an_expired_offer_executes_nothing(
    http: httpx.AsyncClient,
    token: Any,
    sockets: Any,
    workers: Any,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    script_offer(scripted)
    secret, ws = await setup(http, token, sockets, "dora")
    await workers()
    key = keys.offer(Pair("dora", "nova"))

    await say(http, secret, ws, EMPTY)
    assert 0 < await redis.ttl(key) <= keys.OFFER_TTL
    await redis.pexpire(key, 1)  # its time runs out (Redis expires it, as after 300 s)
    for _ in range(int(WAIT / 0.02)):
        if not await redis.exists(key):
            break
        await asyncio.sleep(0.02)
    assert not await redis.exists(key)
    await say(http, secret, ws, "ja")
    assert await notes(http, secret) == [("Einkaufsliste", "Milch")]
    assert calls(scripted, CLS) == []
    assert transcript(ws) == [
        f"character_response: {OFFER_ANSWER}",
        f"character_response: {NOTHING_OPEN}",
    ]
