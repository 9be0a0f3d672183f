"""Seed 002 §2.3 through the real app, queues, consumers and WebSocket: after the maximum
of two corrections an answer the judges still warn about is replaced by the neutral
fallback — the person never receives the warned draft or its warned rewrites."""

from __future__ import annotations

import httpx
from event_helpers import post, script_answer

from novaberg.graph.nodes.evaluate import FALLBACK_DE
from novaberg.llm.scripted import ScriptedLLM

DRAFT = "Grenzwertige Antwort."
REWRITE = "Immer noch grenzwertig."
WARN = {"score": 0.8, "direktiven_score": 0.0, "begruendung": "grenzwertig"}


async def test_a_warned_answer_after_two_corrections_reaches_the_client_as_the_fallback(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, DRAFT)
    scripted.add(r"\[KRITIK\]", REWRITE)  # the corrector's rewrite is warned about as well
    for schema in ("JuristVerdict", "PsychologistVerdict", "EthicistVerdict"):
        scripted.add(".*", WARN, schema=schema)
    response = await post(http, anna, "Was soll ich tun?")
    assert response.status_code == 202, response.text
    await workers()

    answer = await ws.wait_typ("character_response")
    assert answer["nachricht"] == FALLBACK_DE
    await ws.wait_for(lambda m: m.get("node") == "dispatcher" and m.get("graph") == "character")
    seen = [
        (m["typ"], m.get("graph", ""), m.get("node", ""))
        for m in ws.seen
        if m.get("typ") != "verbindung"
    ]
    print(*seen, sep="\n")
    stages = [node for typ, graph, node in seen if graph == "character"]
    assert stages.count("corrector") == 2 and stages.count("evaluate") == 3
    # the answer left after the last evaluate, once its fallback text was perceived
    released = seen.index(("character_response", "", ""))
    assert [s for s in seen[:released] if s[2] == "evaluate"] == [
        ("character_stage", "character", "evaluate")
    ] * 3
    assert len(ws.of("character_response")) == 1
    assert not any(DRAFT in str(m) or REWRITE in str(m) for m in ws.seen)
