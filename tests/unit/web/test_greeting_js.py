"""The page's card-greeting placeholders (web/greeting.js), run by node: {{char}}/<bot> become
the character's name and {{user}}/<user> the person's, in any letter case."""

from __future__ import annotations

import json

import pytest

from web_module import run_module


def fill(text: str, char: str, user: str) -> str:
    names = json.dumps({"char": char, "user": user})
    return run_module("greeting.js", f"m.fillNames({json.dumps(text)}, {names})")


@pytest.mark.parametrize(
    ("text", "filled"),
    [
        ("Hej {{user}}, ich bin {{char}}.", "Hej Ada, ich bin Ebba."),
        ("{{USER}} und <user>, <BOT> und {{Char}}", "Ada und Ada, Ebba und Ebba"),
        ("Keine Platzhalter.", "Keine Platzhalter."),
        ("{{user}}", "Ada"),
    ],
)
def test_fill_names(text: str, filled: str) -> None:
    assert fill(text, "Ebba", "Ada") == filled


def test_a_name_with_dollar_signs_is_taken_literally() -> None:
    assert fill("Hallo {{user}}", "Ebba", "$&$1") == "Hallo $&$1"
