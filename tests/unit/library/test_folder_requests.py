"""A folder request is recognised by its words, without a model: a path next to a word of
permission or reading approves, with a negation or a word of revoking it revokes, and
anything else is not a folder request. Every refusal has a German sentence for the person."""

from __future__ import annotations

from pathlib import Path

import pytest

from novaberg.agents.library_roots import sentences
from novaberg.agents.library_roots.request import (
    APPROVE,
    REVOKE,
    FolderRequest,
    first_path,
    folder_request,
)
from novaberg.memory.library.roots import Refusal


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Du darfst meinen Ordner ~/Notizen lesen", FolderRequest(APPROVE, "~/Notizen")),
        ("You may read my folder ~/Notes", FolderRequest(APPROVE, "~/Notes")),
        ("Kannst du ~/Notizen lesen?", FolderRequest(APPROVE, "~/Notizen")),
        ("Lies /srv/texte.", FolderRequest(APPROVE, "/srv/texte")),
        ("Du darfst „~/Meine Notizen“ lesen", FolderRequest(APPROVE, "~/Meine Notizen")),
        ("Ich erlaube dir (~/Rezepte) zu durchsuchen", FolderRequest(APPROVE, "~/Rezepte")),
        ("Lies ~/Notizen nicht mehr", FolderRequest(REVOKE, "~/Notizen")),
        ("Du darfst ~/Notizen nicht mehr lesen", FolderRequest(REVOKE, "~/Notizen")),
        ("You may no longer read ~/Notes", FolderRequest(REVOKE, "~/Notes")),
        ("Don't read ~/Notes anymore", FolderRequest(REVOKE, "~/Notes")),
        ("Vergiss ~/Notizen", FolderRequest(REVOKE, "~/Notizen")),
        ("Widerrufe die Freigabe für ./texte", FolderRequest(REVOKE, "./texte")),
    ],
)
def test_a_path_with_a_word_of_permission_is_a_folder_request(
    text: str, expected: FolderRequest
) -> None:
    assert folder_request(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Hallo, wie geht es dir?",
        "Du darfst meine Notizen lesen",  # no path: the model routes it
        "Was steht in ~/Notizen/plan.md?",  # a path, but nothing about reading or permission
        "Warum liest du ~/Notizen nicht?",  # a question never revokes
        "Ich darf ~/Arbeit nicht vergessen",  # "darf" is the person's own
        "Lies https://example.org/a",  # a web address is no path
        "Ja / nein, lesen",  # "/" alone is no path
        "Schreib Milch und/oder Brot auf, lesen kann ich später",
    ],
)
def test_anything_else_is_not_a_folder_request(text: str) -> None:
    assert folder_request(text) is None


def test_the_first_path_counts_and_trailing_marks_are_cut() -> None:
    assert first_path("Lies ~/a, dann /b!") == "~/a"
    assert first_path('Du darfst "/srv/zwei Worte" lesen und ~/x') == "/srv/zwei Worte"


def test_every_refusal_has_a_sentence_in_the_persons_words() -> None:
    for reason in Refusal:
        text = sentences.refusal(reason, "~/X", offered=[Path("/srv")], limit=20_000)
        assert text.endswith("."), reason
        for english in ("folder", "NOVABERG", "approved", "refused", "Error"):
            assert english not in text, (reason, text)


def test_the_question_names_the_folder_and_its_files() -> None:
    assert sentences.question(Path("/srv/Notizen"), 3) == (
        "Darf ich deinen Ordner /srv/Notizen lesen? Darin liegen 3 Dateien, die ich lesen kann."
    )
    assert "eine Datei" in sentences.question(Path("/srv/Notizen"), 1)
    home = Path.home()
    assert sentences.shown(home / "Notizen") == "~/Notizen"
