"""The closed consent rule: a table of real answers and what each gate must do."""

from __future__ import annotations

import pytest

from novaberg.agents.consent import (
    APPROVAL_WORDS,
    DECLINE_WORDS,
    FILLER_WORDS,
    Consent,
    interpret_consent,
)

A = Consent.APPROVE
D = Consent.DECLINE
U = Consent.UNCLEAR

TABLE: list[tuple[str, Consent]] = [
    # Plain approvals, case and whitespace insensitive.
    ("ja", A),
    ("Ja", A),
    ("  JA  ", A),
    ("jo", A),
    ("jau", A),
    ("jep", A),
    ("jepp", A),
    ("jawohl", A),
    ("ok", A),
    ("ok!", A),
    ("Okay.", A),
    ("klar", A),
    ("klar, mach", A),
    ("Mach's", A),
    ("machs", A),
    ("los", A),
    ("gerne", A),
    ("genau", A),
    ("meinetwegen", A),
    ("sicher", A),
    ("unbedingt", A),
    ("logo", A),
    ("passt", A),
    ("einverstanden", A),
    ("yes", A),
    ("Yeah", A),
    ("sure", A),
    ("bitte", A),
    # Approval with filler words; whole words, so "gerne" never reads as "ne".
    ("Ja, gerne", A),
    ("ja, bitte", A),
    ("ja bitte, danke", A),
    ("na klar", A),
    ("ja, mach das", A),
    ("ja, mach ruhig", A),
    ("Dann mach mal!", A),
    ("ja doch", A),
    ("auf jeden Fall", A),
    ("in Ordnung", A),
    ("von mir aus", A),
    ("tu es", A),
    ("yes please, thank you", A),
    ("go ahead", A),
    ("ja ja", A),
    # Decline anywhere wins.
    ("nein", D),
    ("Nein!", D),
    ("ne", D),
    ("nee", D),
    ("nö", D),
    ("noe", D),
    ("nein danke", D),
    ("lieber nicht", D),
    ("ja aber nicht heute", D),
    ("nein danke, bitte nicht", D),
    ("ja, nein", D),
    ("keine Lust", D),
    ("lass mal", D),
    ("abbrechen", D),
    ("Stopp", D),
    ("no", D),
    ("nope", D),
    ("don't", D),
    ("nein?", D),
    ("nein 👎", D),
    ("kein Problem", D),
    ("warum nicht?", D),
    ("weiß nicht so recht", D),
    # Unclear: questions, doubt, extra content, foreign characters, nothing.
    ("", U),
    ("   ", U),
    ("ja?", U),
    ("Ja??", U),
    ("ok?", U),
    ("was meinst du?", U),
    ("was meinst du", U),
    ("soll ich?", U),
    ("soll ich", U),
    ("machst du", U),
    ("do you", U),
    ("vielleicht", U),
    ("jein", U),
    ("danke", U),
    ("doch", U),
    ("mal", U),
    ("ja, aber erst morgen", U),
    ("ja oder", U),
    ("ja, später", U),
    ("👍", U),
    ("ja 👍", U),
    ("ja :)", U),
    ("ja 2", U),
    ("ok, ich überlege noch", U),
    ("hmm", U),
    ("was?", U),
    ("später", U),
    ("nichts dagegen", U),
    ("oui", U),
]


@pytest.mark.parametrize(("answer", "expected"), TABLE)
def test_interpret_consent_table(answer: str, expected: Consent) -> None:
    assert interpret_consent(answer) is expected


def test_table_is_large_enough() -> None:
    assert len(TABLE) >= 50


def test_decline_wins_over_every_approval_word() -> None:
    for approval in APPROVAL_WORDS:
        assert interpret_consent(f"{approval} nein") is D
        assert interpret_consent(f"nicht {approval}") is D


def test_every_approval_word_alone_approves() -> None:
    for approval in APPROVAL_WORDS:
        assert interpret_consent(approval) is A, approval


def test_every_decline_word_alone_declines() -> None:
    for decline in DECLINE_WORDS:
        assert interpret_consent(decline) is D, decline


def test_filler_alone_never_approves() -> None:
    for filler in FILLER_WORDS - APPROVAL_WORDS:
        assert interpret_consent(filler) is not A, filler


def test_word_sets_are_disjoint_where_it_matters() -> None:
    assert not (APPROVAL_WORDS & DECLINE_WORDS)
    assert not (FILLER_WORDS & DECLINE_WORDS)


def test_question_mark_never_approves() -> None:
    for approval in APPROVAL_WORDS:
        assert interpret_consent(f"{approval}?") is U
