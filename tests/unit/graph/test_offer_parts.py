"""The offer chain's pure parts (graph/offer_chain.py): the composer's offer line, the offer
recognised in the released answer, when Nova may offer, and how a reply is read
(docs/behaviour/agents.md#offers)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from novaberg.agents.offers import Offer
from novaberg.agents.registry import discover_agents
from novaberg.graph.nodes.composer import build_prompt
from novaberg.graph.nodes.router import consent_update
from novaberg.graph.offer_chain import (
    REPLY_ACCEPTED,
    REPLY_DECLINED,
    REPLY_WITHOUT_OFFER,
    offer_choices,
    read_offer_line,
    read_reply,
    recognised_offer,
)

REGISTRY = discover_agents()
OFFERABLE = REGISTRY.offerable("user")
BREAD = Offer("notizen", "Brot", "Soll ich dir Brot auf die Liste setzen?")
COMPOSED = """EINWAND: nein
GEPRUEFT: nichts
BEWERTUNG: trifft_zu
STAERKE: 0.9
QUELLE: haltung
ANGEBOT: Notizen | Brot | Soll ich dir Brot auf die Liste setzen?
---
Person B bietet an, Brot auf die Einkaufsliste zu setzen."""


def test_the_offerable_agents_are_notes_and_timeline() -> None:
    assert set(OFFERABLE) == {"notizen", "timeline"}


def test_the_offer_line_is_taken_out_and_read() -> None:
    text, candidate = read_offer_line(COMPOSED, OFFERABLE)
    assert "ANGEBOT" not in text and text.endswith("auf die Einkaufsliste zu setzen.")
    assert candidate == {
        "dienst": "notizen",
        "objekt": "Brot",
        "satz": "Soll ich dir Brot auf die Liste setzen?",
    }


@pytest.mark.parametrize(
    "line",
    [
        "ANGEBOT: direktiven | Regel | Soll ich mir das merken?",  # not offerable
        "ANGEBOT: notizen | Brot",  # no sentence
        "ANGEBOT: notizen |  | Soll ich?",  # no object
        "ANGEBOT: keins",
    ],
)
def test_a_malformed_offer_line_offers_nothing_and_still_leaves(line: str) -> None:
    text, candidate = read_offer_line(f"EINWAND: nein\n{line}\n---\nInhalt", OFFERABLE)
    assert candidate is None and "ANGEBOT" not in text


def test_the_offer_is_the_question_of_the_answer_that_names_the_object() -> None:
    candidate = {"dienst": "notizen", "objekt": "Brot", "satz": "Soll ich Brot notieren?"}
    situation = {"objekte": [{"name": "brot", "eigenschaften": {"menge": "2"}, "offen": []}]}
    answer = "Oh, kein Brot mehr? Schade. Soll ich dir Brot auf die Liste setzen?"
    offer = recognised_offer(candidate, answer, situation)
    assert offer == Offer(
        "notizen", "Brot", "Soll ich dir Brot auf die Liste setzen?", {"menge": "2"}
    )
    # the composer's own sentence wins when the answer has it
    candidate["satz"] = "Oh, kein Brot mehr?"
    assert recognised_offer(candidate, answer, situation).sentence == "Oh, kein Brot mehr?"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "answer",
    [
        "Ich setze dir Brot auf die Liste.",  # no question
        "Wie war dein Tag?",  # a question, but not about the object
        "Soll ich dir Brötchen aufschreiben?",  # another word
    ],
)
def test_an_offer_the_answer_does_not_ask_is_not_bound(answer: str) -> None:
    candidate = {"dienst": "notizen", "objekt": "Brot", "satz": "Soll ich?"}
    assert recognised_offer(candidate, answer, {}) is None
    assert recognised_offer(None, answer, {}) is None


def _state(**extra: Any) -> dict[str, Any]:
    return {
        "user_id": "anna",
        "character_id": "nova",
        "event_payload": {"reiz_herkunft": "nutzer_turn"},
        "turn_context": SimpleNamespace(open_offer=None, pending_question=None),
        **extra,
    }


ACUTE = [{"objekt": "Brot", "bekannt": 0, "strecke": 0, "status": "geklaert"}]


def test_nova_offers_only_on_a_turn_with_an_acute_object_and_nothing_else_going_on() -> None:
    assert offer_choices(_state(object_judgement=ACUTE), REGISTRY).startswith("- notizen: ")
    assert offer_choices(_state(), REGISTRY) == ""  # no acute object
    assert offer_choices(_state(object_judgement=ACUTE), None) == ""
    for busy in (
        {"agent_results": [{"agent_name": "notizen", "status": "abgeschlossen"}]},
        {"management_action": "agent"},
        {"offer_reply": REPLY_DECLINED},
        {"turn_context": SimpleNamespace(open_offer=None, pending_question={"agent_name": "x"})},
    ):
        assert offer_choices(_state(object_judgement=ACUTE, **busy), REGISTRY) == "", busy


def test_a_plain_message_composer_prompt_has_no_offer_blocks() -> None:
    plain = build_prompt(_state(user_prompt="Wie geht's dir?"), "")  # type: ignore[arg-type]
    assert "[ANGEBOT]" not in plain and "[ZUSTIMMUNG]" not in plain
    offering = build_prompt(_state(user_prompt="Kein Brot mehr"), "", "- notizen: x")  # type: ignore[arg-type]
    assert "[ANGEBOT]\n" in offering and "- notizen: x" in offering
    unanswered = build_prompt(
        _state(user_prompt="ja", offer_reply=REPLY_WITHOUT_OFFER),  # type: ignore[arg-type]
        "",
    )
    assert "[ZUSTIMMUNG]\nPerson A sagt „ja“" in unanswered


@pytest.mark.parametrize(
    ("utterance", "offer", "reply"),
    [
        ("ja", BREAD, REPLY_ACCEPTED),
        ("Ja, gerne!", BREAD, REPLY_ACCEPTED),
        ("mach das", BREAD, REPLY_ACCEPTED),
        ("ja", None, REPLY_WITHOUT_OFFER),
        ("nein", BREAD, REPLY_DECLINED),
        ("nein danke", None, ""),
        ("ja, aber erst morgen", BREAD, ""),
        ("Wie spät ist es?", BREAD, ""),
        ("ja", Offer("gibtsnicht", "x", "y?"), REPLY_WITHOUT_OFFER),
    ],
)
def test_the_reply_is_read_with_the_closed_consent_rule(
    utterance: str, offer: Offer | None, reply: str
) -> None:
    state = _state(
        user_prompt=utterance,
        turn_context=SimpleNamespace(open_offer=offer, pending_question=None),
    )
    got, accepted = read_reply(state, REGISTRY)  # type: ignore[arg-type]
    assert got == reply
    assert accepted == (offer if reply == REPLY_ACCEPTED else None)


def test_an_own_thought_is_nobodys_yes() -> None:
    state = _state(
        own_thought="ja",
        event_payload={"reiz_herkunft": "eigener_impuls"},
        turn_context=SimpleNamespace(open_offer=BREAD, pending_question=None),
    )
    assert read_reply(state, REGISTRY) == ("", None)  # type: ignore[arg-type]


def test_a_yes_routes_without_a_model_call_to_the_offer_or_to_nothing() -> None:
    taken = consent_update(REPLY_ACCEPTED, BREAD)
    assert taken["management_action"] == "agent" and taken["management_target"] == "notizen"
    assert taken["accepted_offer"] == BREAD and taken["router_failure"] is None
    nothing = consent_update(REPLY_WITHOUT_OFFER, None)
    assert nothing["management_action"] == "" and "accepted_offer" not in nothing
    assert nothing["offer_reply"] == REPLY_WITHOUT_OFFER
