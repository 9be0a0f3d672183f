"""The greetings the page browses (web/greeting.js `greetingsOf`), run by node: the first,
then the card's alternate ones, blank ones left out, in order."""

from __future__ import annotations

import json
from typing import Any

from web_module import run_module


def greetings(character: dict[str, Any]) -> list[str]:
    result: list[str] = json.loads(
        run_module("greeting.js", f"JSON.stringify(m.greetingsOf({json.dumps(character)}))")
    )
    return result


def test_first_then_alternates_blank_ones_left_out() -> None:
    character = {"erste_nachricht": " Hej! ", "weitere_begruessungen": ["", "Moin.", "  ", "Na?"]}
    assert greetings(character) == ["Hej!", "Moin.", "Na?"]


def test_no_first_greeting_but_alternates() -> None:
    assert greetings({"erste_nachricht": "", "weitere_begruessungen": ["Moin."]}) == ["Moin."]


def test_a_character_without_greetings_has_none() -> None:
    assert greetings({"erste_nachricht": ""}) == []
