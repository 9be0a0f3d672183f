"""The classification check's levels and a wording's candidate phrasings
(docs/behaviour/agents.md#classification, #learnt-phrasings)."""

from __future__ import annotations

from novaberg.agents.verb_mappings import phrasings
from novaberg.agents.workflow import confidence, keyword_hints


def test_the_check_levels() -> None:
    assert confidence("remove_content", set()) == "niedrig"
    assert confidence("remove_content", set(), {"remove_content"}) == "mittel"
    assert confidence("remove_content", set(), {"add_content"}) == "niedrig"  # no evidence yet
    assert confidence("remove_content", {"remove_content"}, {"add_content"}) == "hoch"
    assert confidence("remove_content", {"add_content"}, {"remove_content"}) == "konflikt"


def test_candidates_leave_out_content_filler_and_keywords() -> None:
    normalised = "remove_content: Milch von Notiz 'Einkaufsliste' entfernen"
    assert phrasings("Hau die Milch von der Einkaufsliste runter", normalised, "Einkaufsliste") == [
        "hau",
        "runter",
    ]
    keyword = lambda word: bool(keyword_hints(word))  # noqa: E731
    assert phrasings("Streich bitte die Milch", normalised, "", skip=keyword) == []
    many = "eins zwei drei vier fünf sechs"
    assert len(phrasings(many, "", "")) == 4  # a long message teaches no more
