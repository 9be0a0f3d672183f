"""The situation's objects outlive the 4 h bubble — end to end: the real app, queues,
consumers, graphs and WebSocket, the scripted model playing a perfect decision (seed 002
§3.2 row 4a; docs/behaviour/memory.md#situation-objects).

"Mein Fahrrad ist rot." → "Ich habe es blau lackiert." (blau supersedes rot) → the bubble
expires → "Welche Farbe hat mein Fahrrad?": the situation's call is offered the stored
"farbe=blau", the memory anchor puts it in front of memory, and Nova says blue. Without the
stored values the model has nothing to go on (its rule for that case leaves the colour
open) and the answer stays generic.
"""

from __future__ import annotations

from typing import Any

import httpx
import redis.asyncio as aioredis
from event_helpers import Socket, post, script_answer
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

RED = "Mein Fahrrad ist rot."
BLUE = "Ich habe es blau lackiert."
ASK = "Welche Farbe hat mein Fahrrad?"
GENERIC = "Alles klar."
SAYS_BLUE = "Dein Fahrrad ist blau – frisch lackiert."


def bike(**properties: str) -> dict[str, Any]:
    return {
        "gegenstand": "das Fahrrad",
        "objekte": [
            {
                "name": "Fahrrad",
                "eigenschaften": properties,
                "offen": [] if properties else ["farbe"],
            }
        ],
        "objekt_bezug": "Fahrrad",
    }


def script_bike(scripted: ScriptedLLM) -> None:
    """A perfect model: the situation reads what each utterance says; asked for the colour
    it knows it only from what it is offered; the composer says what memory holds."""
    script_answer(scripted, GENERIC)
    scripted.add(rf"\[AKTUELLER PROMPT\]\n{RED}", bike(farbe="rot"), schema="SituationReading")
    scripted.add(rf"\[AKTUELLER PROMPT\]\n{BLUE}", bike(farbe="blau"), schema="SituationReading")
    scripted.add(rf"\[AKTUELLER PROMPT\]\n{ASK}", bike(), schema="SituationReading")
    scripted.add(
        rf"(?s)^(?=.*Objekt Fahrrad: farbe=blau)(?=.*\[AKTUELLER PROMPT\]\n{ASK})",
        bike(farbe="blau"),
        schema="SituationReading",
    )
    scripted.add(
        rf"(?s)^(?=.*Du bereitest den Inhalt)(?=.*Fahrrad: farbe = blau)(?=.*{ASK})",
        "EINWAND: nein\nGEPRUEFT: nichts zu prüfen\nBEWERTUNG: trifft_zu\nSTAERKE: 0.9\n"
        "QUELLE: gedaechtnis\n---\nPerson B sagt, das Fahrrad ist blau, frisch lackiert.",
    )
    scripted.add(r"(?s)das Fahrrad ist blau, frisch lackiert.*Antworte kurz", SAYS_BLUE)


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


async def colours(db: AsyncConnectionPool, pair: Pair) -> list[tuple[str, bool]]:
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT e.wert, e.abgeloest_am IS NULL AS aktuell FROM sachlage_eigenschaft e"
            " JOIN sachlage_objekt o ON o.id = e.objekt_id"
            " WHERE o.user_id = %s AND o.character_id = %s AND e.eigenschaft = 'farbe'"
            " ORDER BY e.id",
            (pair.user_id, pair.character_id),
        )
        return [(r["wert"], r["aktuell"]) for r in await cur.fetchall()]


async def test_the_colour_said_before_the_bubble_expired_is_answered_after(
    http: httpx.AsyncClient,
    token: Any,
    sockets: Any,
    workers: Any,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
) -> None:
    pair = Pair("dora", "nova")
    script_bike(scripted)
    secret = await token(pair.user_id)
    ws = await sockets(secret)
    await workers()

    await say(http, secret, ws, RED)
    assert await colours(db, pair) == [("rot", True)]
    await say(http, secret, ws, BLUE)
    assert await colours(db, pair) == [("rot", False), ("blau", True)]

    # four hours later: the bubble and its record are gone
    await redis.delete(keys.situation(pair), keys.situation_history(pair))
    answer = await say(http, secret, ws, ASK)

    assert answer["nachricht"] == SAYS_BLUE
    asked = [
        c["prompt"]
        for c in scripted.calls
        if c["schema"] == "SituationReading" and f"[AKTUELLER PROMPT]\n{ASK}" in c["prompt"]
    ]
    assert len(asked) == 1 and "[GESPEICHERTE WERTE]" in asked[0]
    responses = [m["nachricht"] for m in ws.of("character_response")]
    print("\n".join(f"character_response: {text}" for text in responses))
    assert responses[-1] == SAYS_BLUE
