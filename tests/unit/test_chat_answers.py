"""How `novaberg chat` shows an answer: a question marked with the answer it waits for,
and one receipt line per stored change."""

from __future__ import annotations

import io

from novaberg.cli.chat import ChatSession, Screen


def shown(message: dict[str, object]) -> str:
    out = io.StringIO()
    session = ChatSession("http://127.0.0.1:1", "t", "nova", Screen(out, live=False, width=80))
    session.name = "Nova"
    session.show_answer(message)
    return out.getvalue()


def test_a_yes_no_question_is_marked_and_says_what_answer_it_waits_for() -> None:
    text = shown(
        {
            "nachricht": "Soll ich sie anlegen?",
            "erwartet_antwort": {"typ": "awaiting_user", "agent": "notizen", "art": "ja_nein"},
            "aenderungen": [],
        }
    )
    assert text == "Nova (fragt): Soll ich sie anlegen?\n  (antworte mit ja oder nein)\n"


def test_receipts_follow_the_answer() -> None:
    text = shown(
        {
            "nachricht": "Steht drauf.",
            "erwartet_antwort": None,
            "aenderungen": [
                {"agent": "notizen", "aktion": "add_content", "text": "Einkaufsliste: + Brot"},
                {"agent": "timeline", "aktion": "create", "text": "Termin: Meeting, Mo 10:00"},
            ],
        }
    )
    assert text == (
        "Nova: Steht drauf.\n  ✓ Einkaufsliste: + Brot\n  ✓ Termin: Meeting, Mo 10:00\n"
    )


def test_an_answer_of_an_older_server_shows_as_before() -> None:
    assert shown({"nachricht": "Hallo."}) == "Nova: Hallo.\n"


def test_a_refusal_is_shown_in_words() -> None:
    import httpx

    from novaberg.api.error_sentences import SENTENCES
    from novaberg.cli.chat import _problem

    body = {"fehler": "text_zu_lang", "detail": "the body exceeds 131072 bytes"}
    worded = {**body, "meldung": SENTENCES["text_zu_lang"]}
    assert _problem(httpx.Response(413, json=worded)) == SENTENCES["text_zu_lang"]
    assert _problem(httpx.Response(401, json={"detail": worded})) == SENTENCES["text_zu_lang"]
    assert _problem(httpx.Response(413, json=body)).startswith("text_zu_lang: ")  # older server
