"""An offer is open only while the answer that made it is the conversation's last word
(docs/behaviour/agents.md#offers): a message that is not a bare yes is routed as usual and
the offer closes with its answer, so a later "ja" executes nothing."""

from __future__ import annotations

from novaberg.agents.notes import repository as notes
from novaberg.agents.offers import take_offer
from novaberg.agents.registry import discover_agents
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("anna", "nova")
EMPTY = "Mir ist das Brot ausgegangen."
SENTENCE = "Soll ich dir Brot auf die Liste setzen?"
TALK = {"needs_memory": True, "momentum": "mid", "management_action": ""}
APPROVE = {"score": 0.05, "direktiven_score": 0.05, "begruendung": ""}


def script(scripted: ScriptedLLM) -> None:
    scripted.add(".*", TALK, schema="RouterDecision")
    for schema in ("JuristVerdict", "PsychologistVerdict", "EthicistVerdict"):
        scripted.add(".*", APPROVE, schema=schema)
    scripted.add(
        ".*", {"ergebnis": "OK", "probleme": "", "korrigierte_antwort": ""}, schema="ThinkerCheck"
    )
    scripted.add(r"Antworte kurz und natürlich", "Gut.")
    scripted.add(
        rf"\[AKTUELLER PROMPT\]\n{EMPTY}",
        {"objekte": [{"name": "Brot"}], "objekt_bezug": "Brot"},
        schema="SituationReading",
    )
    scripted.add(
        r"(?s)\[ANGEBOT\]\n.*- notizen: ",
        "EINWAND: nein\nGEPRUEFT: -\nBEWERTUNG: trifft_zu\nSTAERKE: 1\nQUELLE: haltung\n"
        f"ANGEBOT: notizen | Brot | {SENTENCE}\n---\nPerson B bietet an, Brot aufzuschreiben.",
    )
    scripted.add(r"(?s)bietet an, Brot.*Antworte kurz und natürlich", f"Oh je. {SENTENCE}")


async def test_a_message_that_is_no_yes_closes_the_offer(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script(scripted)
    runtime = GraphRuntime(deps, registry=discover_agents())
    first = await run_turn_inprocess(runtime, PAIR, EMPTY)
    assert first.character_state["response"] == f"Oh je. {SENTENCE}"
    assert await deps.redis.exists(keys.offer(PAIR)), "the answer asked it: bound"

    passing = await run_turn_inprocess(runtime, PAIR, "Wie spät ist es eigentlich?")
    assert passing.character_state.get("offer_reply", "") == ""
    assert not await deps.redis.exists(keys.offer(PAIR)), "passed by: closed with the answer"

    routed = sum(1 for c in scripted.calls if c["schema"] == "RouterDecision")
    later = await run_turn_inprocess(runtime, PAIR, "ja")
    assert later.character_state["offer_reply"] == "ohne_angebot"
    assert not later.character_state.get("agent_results")
    assert sum(1 for c in scripted.calls if c["schema"] == "RouterDecision") == routed
    assert not any(c["schema"] == "NotesClassification" for c in scripted.calls)
    assert await notes.list_active(deps.pool, PAIR.user_id) == []
    assert await take_offer(deps.redis, PAIR) is None
