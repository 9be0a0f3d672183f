"""The bound offer (agents/offers.py) and an accepted offer through the planner ⇄
agent_dispatch loop: exactly the offered agent runs, its classifier sees `[OBJEKT]` and
`[ZUSTIMMUNG]`, the offer is taken once (docs/behaviour/agents.md#offers)."""

from __future__ import annotations

from typing import Any

from agent_turns import NOW, last, registry, run_turn

from novaberg.agents.notes import repository as repo
from novaberg.agents.offers import (
    Offer,
    bind_offer,
    close_offer,
    offer_blocks,
    offer_context,
    offer_from_raw,
    take_offer,
)
from novaberg.graph.contract import GraphDeps
from novaberg.graph.nodes.planner import choose_agent
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("u1", "nova")
BREAD = Offer("notizen", "Brot", "Soll ich dir Brot auf die Liste setzen?", {"menge": "2"})
CLS = "NotesClassification"


async def test_bound_offer_waits_its_ttl_and_is_taken_once(deps: GraphDeps) -> None:
    await bind_offer(deps.redis, PAIR, BREAD)
    assert 0 < await deps.redis.ttl(keys.offer(PAIR)) <= keys.OFFER_TTL
    assert offer_from_raw(await deps.redis.get(keys.offer(PAIR)), PAIR) == BREAD
    assert await take_offer(deps.redis, PAIR) == BREAD
    assert await take_offer(deps.redis, PAIR) is None, "a yes executes its offer once"
    await bind_offer(deps.redis, PAIR, BREAD)
    await close_offer(deps.redis, PAIR)
    assert not await deps.redis.exists(keys.offer(PAIR))


def test_an_unreadable_or_incomplete_offer_is_none() -> None:
    assert offer_from_raw(None, PAIR) is None
    assert offer_from_raw("{kaputt", PAIR) is None
    assert offer_from_raw('["x"]', PAIR) is None
    assert offer_from_raw('{"dienst": "notizen", "objekt": "Brot"}', PAIR) is None


def test_classifier_blocks_are_empty_without_an_offer() -> None:
    assert offer_blocks({"user_id": "u1"}) == {"objekt": "", "angebot_satz": "", "zustimmung": ""}
    blocks = offer_blocks({"angebot": offer_context(BREAD, "ja, gerne")})
    assert blocks == {
        "objekt": "Brot (menge: 2)",
        "angebot_satz": "Soll ich dir Brot auf die Liste setzen?",
        "zustimmung": "ja, gerne",
    }


def _yes(offer: Offer = BREAD) -> dict[str, Any]:
    return {"accepted_offer": offer, "offer_reply": "zugestimmt"}


async def test_a_yes_runs_exactly_the_offer_with_object_and_consent_blocks(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    note_id = await repo.insert(
        deps.pool, "u1", name="Einkaufsliste", typ="einkauf", text="Milch", themen=[], now=NOW
    )
    await bind_offer(deps.redis, PAIR, BREAD)
    scripted.add(
        r"(?s)\[OBJEKT\]\nDie Sache des Angebots: Brot \(menge: 2\).*"
        r"\[ZUSTIMMUNG\]\nNova hat angeboten: „Soll ich dir Brot auf die Liste setzen\?“\n"
        r"Der Nutzer hat zugestimmt: „ja“",
        {"action": "add_content", "target": "Einkaufsliste", "elemente": ["Brot"]},
        schema=CLS,
    )
    out = await run_turn(deps, "ja", "notizen", **_yes())
    assert last(out).status == "abgeschlossen"
    row = await repo.get(deps.pool, "u1", note_id)
    assert row is not None and row["text"] == "Milch, Brot"
    assert len(await repo.list_active(deps.pool, "u1")) == 1
    assert not await deps.redis.exists(keys.offer(PAIR)), "the offer is consumed"
    assert [c["schema"] for c in scripted.calls] == [CLS], "one classification, nothing else"


async def test_an_offer_already_taken_is_not_executed_again(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """The turn runs again after a crash: the offer is gone, the agent does not run."""
    out = await run_turn(deps, "ja", "notizen", **_yes())
    result = last(out)
    assert result.status == "fehler" and "nicht mehr offen" in (result.error or "")
    assert scripted.calls == [] and await repo.list_active(deps.pool, "u1") == []


async def test_a_plain_task_turn_has_no_offer_blocks(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """The classifier's prompt does not grow when no offer was accepted."""
    scripted.add(r"Äußerung des Nutzers", {"action": "read", "target": ""}, schema=CLS)
    await run_turn(deps, "Was steht auf meinen Listen?", "notizen")
    prompt = next(c["prompt"] for c in scripted.calls if c["schema"] == CLS)
    assert "[OBJEKT]" not in prompt and "[ZUSTIMMUNG]" not in prompt


def test_the_accepted_offer_wins_over_every_other_choice() -> None:
    """Timeline asked for, a notes intent perceived — the yes still runs the offered agent."""
    state: Any = {
        "needs_timeline": True,
        "management_target": "timeline",
        **_yes(Offer("notizen", "Brot", "Soll ich Brot notieren?")),
    }
    assert choose_agent(state, registry()) == "notizen"
    state["accepted_offer"] = Offer("timeline", "Zahnarzt", "Soll ich den Zahnarzt eintragen?")
    state["needs_timeline"] = False
    state["management_target"] = "notizen"
    assert choose_agent(state, registry()) == "timeline"
    state["accepted_offer"] = Offer("weg", "x", "y?")
    assert choose_agent(state, registry()) is None, "an unknown offered agent runs nothing"
