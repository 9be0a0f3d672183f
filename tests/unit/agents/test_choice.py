"""Reading a choice from a free answer: numbers are ASCII digits."""

from __future__ import annotations

from novaberg.agents.choice import pick_candidate

CANDIDATES = [{"id": 7, "name": "Einkauf"}, {"id": 9, "name": "Urlaub"}, {"id": 12, "name": "Arzt"}]


def test_an_index_or_an_id_picks_the_candidate() -> None:
    assert pick_candidate("die 2", CANDIDATES) == CANDIDATES[1]
    assert pick_candidate("Nummer 12", CANDIDATES) == CANDIDATES[2]


def test_unicode_digits_and_endless_numbers_pick_nothing() -> None:
    """'²' and '٣' are digits to `str.isdigit`; int() refused the one (a crashed turn) and
    read the other as 3. Neither, nor a number of 5,000 digits, names a candidate."""
    for answer in ("²", "die ²", "٣", "1" * 5000):
        assert pick_candidate(answer, CANDIDATES) is None, answer[:10]
