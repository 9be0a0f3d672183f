"""The person's persona in the prompts: one block when set, nothing when unset (a plain
turn costs no extra tokens), and a card's {{user}} says the persona's name."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from novaberg.agents.turn_context import UserPersona, person_name, persona
from novaberg.graph.person_block import composer_person, responder_person
from novaberg.store.characters import CardFields


def _state(user_persona: UserPersona | None) -> Any:
    return {"turn_context": SimpleNamespace(user_persona=user_persona)}


def test_unset_persona_adds_no_text() -> None:
    for state in (_state(None), {}):
        assert responder_person(state) == ""
        assert composer_person(state) == ""


def test_a_name_alone_and_a_description_alone() -> None:
    named = _state(UserPersona("Annika", ""))
    assert responder_person(named) == "Die Person, mit der du sprichst, heißt Annika."
    assert composer_person(named) == "Person A heißt Annika."
    described = _state(UserPersona("", "Gärtnerin."))
    assert responder_person(described) == "So beschreibt sich die Person selbst: Gärtnerin."
    assert composer_person(described) == "So beschreibt sich Person A selbst: Gärtnerin."


def test_a_cards_user_macro_says_the_persona_name() -> None:
    card = CardFields("Käthe", "", "{{user}} klopft bei {{char}}.", "", "", "")
    assert persona(card, person_name(UserPersona("Annika", ""), "anna")) == (
        "Beschreibung: Annika klopft bei Käthe."
    )
    assert person_name(None, "anna") == "anna"
    assert person_name(UserPersona("", "nur Text"), "anna") == "anna"
