"""A character imported from a card over HTTP answers at `/chat` at once, as itself."""

from __future__ import annotations

from typing import Any

import httpx
from event_helpers import post, script_answer

from novaberg.llm.scripted import ScriptedLLM

CARD: dict[str, Any] = {
    "spec": "chara_card_v3",
    "spec_version": "3.0",
    "data": {
        "name": "Käthe",
        "description": "Eine Leuchtturmwärterin an der Nordsee.",
        "personality": "wortkarg, herzlich",
        "scenario": "{{user}} klopft bei Sturm an die Tür von {{char}}.",
        "first_mes": "Moin.",
        "mes_example": "",
        "character_book": {
            "entries": [
                {
                    "keys": ["Flint"],
                    "content": "Käthes Hund heißt Flint.",
                    "enabled": True,
                    "insertion_order": 0,
                }
            ]
        },
    },
}


async def test_an_imported_card_character_answers_at_chat(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM, card_png: Any
) -> None:
    anna = await token("anna")
    created = await http.post(
        "/characters",
        content=card_png(CARD, "ccv3"),
        headers={"Authorization": f"Bearer {anna}", "Content-Type": "image/png"},
    )
    assert created.status_code == 201, created.text
    character = created.json()["character_id"]
    assert character == "kaethe"
    ws = await sockets(anna)
    accepted = await post(http, anna, "Was macht Flint eigentlich bei Sturm?", character=character)
    assert accepted.status_code == 202, accepted.text
    script_answer(scripted, "Flint. Er mag keine Gewitter.")
    await workers()
    answer = await ws.wait_typ("character_response")
    assert answer["character_id"] == character and answer["nachricht"].startswith("Flint")
    (responder,) = [
        c["prompt"]
        for c in scripted.calls
        if c["schema"] is None and "Du bist Käthe." in c["prompt"]
    ]
    assert "Beschreibung: Eine Leuchtturmwärterin an der Nordsee." in responder
    assert "anna klopft bei Sturm an die Tür von Käthe." in responder, "card macros filled in"
    # Memory reaches the answer through the composer (the responder never reads it itself).
    (composer,) = [
        c["prompt"]
        for c in scripted.calls
        if c["schema"] is None and "[AUFGABE]\nDu bereitest den Inhalt" in c["prompt"]
    ]
    assert "Hund heißt Flint." in composer, "the lorebook entry, found by its key"
