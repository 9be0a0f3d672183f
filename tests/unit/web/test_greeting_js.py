"""The page's card-greeting placeholders (web/greeting.js), run by node: {{char}}/<bot> become
the character's name and {{user}}/<user> the person's, in any letter case."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

MODULE = Path(__file__).resolve().parents[3] / "src" / "novaberg" / "web" / "greeting.js"
NODE = shutil.which("node")


def fill(text: str, char: str, user: str) -> str:
    assert NODE, "node is needed for the page's script tests (it comes with npm)"
    names = json.dumps({"char": char, "user": user})
    script = (
        f"import({json.dumps(MODULE.as_uri())})"
        f".then(m => process.stdout.write(m.fillNames({json.dumps(text)}, {names})))"
    )
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


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
