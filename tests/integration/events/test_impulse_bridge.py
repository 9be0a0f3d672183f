"""A research result that arrives hours later is said in the context that caused it
(docs/behaviour/nodes.md#situation): through the real intake, queues, workers and
WebSocket. The person asks; hours later — the situation record of that turn has expired —
Nova's own impulse arrives naming that turn; the situation finds the turn by similarity in
the archive, and the composer gets it as `[SACHLAGE-BRUECKE]`."""

from __future__ import annotations

import asyncio
from typing import Any

import redis.asyncio as aioredis
from event_helpers import WAIT, post, script_answer
from psycopg_pool import AsyncConnectionPool

from novaberg.events.model import build_event
from novaberg.events.queues import push_event
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("anna", "nova")
QUESTION = "Darf Bello mit in die neue Wohnung?"
RESULT = "Ich habe nachgesehen: in die neue Wohnung darf Bello, wenn der Vermieter zustimmt."
SITUATION = {
    "gegenstand": "Bello soll mit umziehen",
    "objekte": [{"name": "Bello", "eigenschaften": {"rasse": "Dackel"}, "offen": []}],
    "objekt_bezug": "Bello",
}


async def archived(db: AsyncConnectionPool, turn_id: str) -> bool:
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT 1 FROM gespraechsarchiv WHERE turn_id = %s AND sprecher = 'user'", (turn_id,)
        )
        return await cur.fetchone() is not None


def shown(messages: list[dict[str, Any]]) -> list[str]:
    """The socket's messages as lines: type, and the stage or the text."""
    lines = []
    for m in messages:
        detail = m.get("stage") or m.get("node") or m.get("nachricht") or m.get("text") or ""
        lines.append(f"{m['typ']}: {detail}".rstrip(": "))
    return lines


async def test_a_late_research_result_is_said_in_its_triggering_context(
    http, workers, sockets, token, redis: aioredis.Redis, db: AsyncConnectionPool,
    scripted: ScriptedLLM,
) -> None:  # fmt: skip
    anna = await token("anna")
    ws = await sockets(anna)
    scripted.add(".*", SITUATION, schema="SituationReading")
    script_answer(scripted, "Ich schaue nach, ob Bello mit darf.")
    await workers()
    assert (await post(http, anna, QUESTION)).status_code == 202
    asked = await ws.wait_typ("character_response")
    for _ in range(int(WAIT / 0.05)):  # Path 1's tail archives the question
        if await archived(db, asked["turn_id"]):
            break
        await asyncio.sleep(0.05)
    assert await archived(db, asked["turn_id"])

    # hours later: the turn's situation record has expired; the result arrives
    await redis.delete(keys.situation_history(PAIR))
    script_answer(scripted, "Gute Nachricht zu Bello und der Wohnung: er darf mit!")
    seen_before = len(ws.seen)
    await push_event(
        redis,
        build_event(
            user_id="anna",
            character_id="nova",
            source="character",
            typ="message",
            payload={
                "turn_id": "t-recherche",
                "eigener_gedanke": RESULT,
                "reiz_herkunft": "eigener_impuls",
                "gedanke_arousal": 0.5,
                "ausloeser_turn_id": asked["turn_id"],
            },
        ),
    )
    answer = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and m.get("turn_id") == "t-recherche"
    )
    print("\n".join(shown([m for m in ws.seen[seen_before:] if m.get("turn_id") == "t-recherche"])))
    assert answer["reiz_herkunft"] == "eigener_impuls"
    assert answer["ausloeser_turn_id"] == asked["turn_id"]
    assert answer["nachricht"] == "Gute Nachricht zu Bello und der Wohnung: er darf mit!"

    composer = [c["prompt"] for c in scripted.calls if "[ANLASS]" in c["prompt"]][-1]
    bridge = composer.split("[SACHLAGE-BRUECKE]\n", 1)[1].split("\n\n", 1)[0]
    print(bridge)
    assert f"„{QUESTION}“" in bridge
    assert "(Der Zusammenhang ist nach Ähnlichkeit gefunden, nicht sicher.)" in bridge
