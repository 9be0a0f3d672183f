"""The greetings the page browses (web/greeting.js `greetingsOf`), run by node: the first,
then the card's alternate ones, blank ones left out, in order."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

MODULE = Path(__file__).resolve().parents[3] / "src" / "novaberg" / "web" / "greeting.js"
NODE = shutil.which("node")


def greetings(character: dict[str, Any]) -> list[str]:
    assert NODE, "node is needed for the page's script tests (it comes with npm)"
    script = (
        f"import({json.dumps(MODULE.as_uri())})"
        f".then(m => process.stdout.write(JSON.stringify(m.greetingsOf({json.dumps(character)}))))"
    )
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    result: list[str] = json.loads(done.stdout)
    return result


def test_first_then_alternates_blank_ones_left_out() -> None:
    character = {"erste_nachricht": " Hej! ", "weitere_begruessungen": ["", "Moin.", "  ", "Na?"]}
    assert greetings(character) == ["Hej!", "Moin.", "Na?"]


def test_no_first_greeting_but_alternates() -> None:
    assert greetings({"erste_nachricht": "", "weitere_begruessungen": ["Moin."]}) == ["Moin."]


def test_a_character_without_greetings_has_none() -> None:
    assert greetings({"erste_nachricht": ""}) == []
