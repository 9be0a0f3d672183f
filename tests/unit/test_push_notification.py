"""What a push notification says: a short preview cut at a word, and the URL that opens
the page at the message (reach/push.py)."""

from __future__ import annotations

from novaberg.reach.push import PREVIEW_CHARS, open_url, payload, preview
from novaberg.reach.routing import Outcome


def test_a_short_text_is_shown_whole_and_a_long_one_cut_at_a_word() -> None:
    assert preview("Wie  geht\nes dir?") == "Wie geht es dir?"
    long = "Heute war ein langer Tag und ich habe viel an dich gedacht. " * 5
    cut = preview(long)
    assert len(cut) <= PREVIEW_CHARS + 2 and cut.endswith(" …")
    assert long.startswith(cut[:-2]) and long[len(cut) - 2] == " ", "cut between words"


def test_the_url_opens_the_conversation_at_that_turn() -> None:
    assert open_url("nova", "impuls-ab12") == "/?charakter=nova#turn-impuls-ab12"
    assert open_url("luna mond", "") == "/?charakter=luna%20mond"
    note = payload(Outcome("character_response", "nova", "Hallo", [], turn_id="t1"), 7, "")
    assert note == {
        "titel": "nova",
        "text": "Hallo",
        "url": "/?charakter=nova#turn-t1",
        "character_id": "nova",
        "seq": 7,
    }
