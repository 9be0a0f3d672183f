"""The latest value of a changed fact moves ahead of its older statements (pure ordering;
the pairs come from store/archive.py's `queue_restated`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from novaberg.memory.search.results import LAYER_ARCHIVE, LAYER_LONG_TERM, MemoryHit
from novaberg.memory.search.supersession import announces_change, latest_first

START = datetime(2026, 1, 1, tzinfo=UTC)


def _hit(ident: int, day: int, layer: str = LAYER_ARCHIVE, text: str = "") -> MemoryHit:
    said = text or f"It is {ident} now."
    return MemoryHit(layer, str(ident), 0.0, said, START + timedelta(days=day))


def _ids(hits: list[MemoryHit]) -> list[str]:
    return [hit.id for hit in hits]


def test_a_newer_statement_takes_the_place_of_the_older_one() -> None:
    hits = [_hit(1, 0), _hit(2, 5), _hit(3, 9)]  # 3 restates 1, later
    ordered = latest_first(hits, [(1, 3, 0.6)], limit=3)
    assert _ids(ordered) == ["3", "1", "2"]
    assert ordered[0].signals["aktuell"] == (3, 0.6)


def test_a_chain_of_values_ends_newest_first() -> None:
    hits = [_hit(1, 0), _hit(2, 5), _hit(3, 9), _hit(4, 1)]  # 1 → 2 → 3: 4 kg, 5 kg, 6 kg
    ordered = latest_first(hits, [(1, 2, 0.5), (1, 3, 0.5), (2, 3, 0.5)], limit=4)
    assert _ids(ordered) == ["3", "2", "1", "4"]


def test_a_newer_statement_from_below_the_result_enters_it_only_ahead_of_its_old_one() -> None:
    hits = [_hit(1, 0), _hit(2, 5), _hit(5, 2), _hit(3, 9)]  # limit 2: 5 and 3 are lookahead
    assert _ids(latest_first(hits, [(1, 3, 0.5)], limit=2)) == ["3", "1"]
    assert _ids(latest_first(hits, [(5, 3, 0.5)], limit=2)) == ["1", "2"], (
        "its old statement is not in the result either: nothing moves in"
    )


def test_an_older_statement_ranked_below_the_newer_one_changes_nothing() -> None:
    hits = [_hit(3, 9), _hit(2, 5), _hit(1, 0)]
    ordered = latest_first(hits, [(1, 3, 0.9)], limit=3)
    assert _ids(ordered) == ["3", "2", "1"] and "aktuell" not in ordered[0].signals


def test_only_archived_turns_are_compared() -> None:
    hits = [_hit(1, 0, LAYER_LONG_TERM), _hit(3, 9)]
    assert _ids(latest_first(hits, [(1, 3, 0.9)], limit=2)) == ["1", "3"]


def test_a_newer_statement_that_does_not_announce_a_change_stays() -> None:
    hits = [_hit(1, 0), _hit(2, 5), _hit(3, 9, text="A dog stole my bread in the park.")]
    assert _ids(latest_first(hits, [(1, 3, 0.9)], limit=3)) == ["1", "2", "3"]


@pytest.mark.parametrize(
    ("text", "changed"),
    [
        ("We finally moved, I live in Bristol now.", True),
        ("I don't eat meat anymore.", True),
        ("I no longer work at the library.", True),
        ("I switched to the 8:15 train.", True),
        ("I dropped Spanish and started Japanese instead.", True),
        ("Ich bin nach Hamburg gezogen.", True),
        ("Ich wohne jetzt in Hamburg.", True),
        ("Ich fahre keinen Fiat mehr.", True),
        ("Ich habe in der Bücherei gekündigt.", True),
        ("Mittlerweile spiele ich Cello.", True),
        ("I live in Leeds.", False),
        ("Ein Hund hat heute im Park mein Brot geklaut.", False),
        ("Die Hunde meiner Eltern heißen Rex und Struppi.", False),
        ("The knowledge is nowhere to be found.", False),
    ],
)
def test_change_words_per_phrase(text: str, changed: bool) -> None:
    assert announces_change(text) is changed
