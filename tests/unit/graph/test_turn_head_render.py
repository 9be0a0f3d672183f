"""The turn head is the same text before and after the turn's user entry is stored, and
the memory shown beside it leaves out the session turns it already holds."""

from __future__ import annotations

from novaberg.graph.nodes.reducer import contexts_beside_head
from novaberg.graph.turn_head import earlier_turns, turn_head, with_head

EARLIER = [
    {"turn_id": "t1", "rolle": "user", "inhalt": "Hallo", "emotion": "freude"},
    {"turn_id": "t1", "rolle": "assistant", "inhalt": "Hi!"},
]
CURRENT = {"turn_id": "t2", "rolle": "user", "inhalt": "Wie geht's?", "emotion": "neugierig"}


def test_the_head_is_the_same_before_and_after_the_user_entry_is_stored() -> None:
    before = turn_head("Nova", "06.12.2026", earlier_turns(EARLIER, "t2"), "Wie geht's?")
    after = turn_head("Nova", "06.12.2026", earlier_turns([*EARLIER, CURRENT], "t2"), "Wie geht's?")
    assert before == after
    assert before["role"] == "system"
    assert before["content"] == (
        "[HEUTE]\n06.12.2026\n\n"
        "[VERLAUF]\n[1] USER (freude): Hallo\n[2] NOVA: Hi!\n\n"
        "[AKTUELLER PROMPT]\nWie geht's?"
    )


def test_a_first_turn_has_no_history_block_and_the_role_follows_the_head() -> None:
    head = turn_head("Nova", "06.12.2026", [], "Hallo")
    assert "[VERLAUF]" not in head["content"]
    messages = with_head(head, "[AUFGABE]\nTu etwas.")
    assert messages == [head, {"role": "user", "content": "[AUFGABE]\nTu etwas."}]


def test_memory_beside_the_head_keeps_the_summary_and_memories_not_the_turns() -> None:
    entries = [
        {"quelle": "session", "subtyp": "zusammenfassung", "inhalt": "Es ging um Köln."},
        {"quelle": "session", "subtyp": "turn", "inhalt": "Nutzer: Hallo"},
        {"quelle": "lzg", "subtyp": "fakt", "inhalt": "Der Nutzer mag Kaffee."},
    ]
    third, composer = contexts_beside_head({"memory_entries": entries, "character_id": "nova"})
    assert "Es ging um Köln." in third and "Der Nutzer mag Kaffee." in third
    assert "Nutzer: Hallo" not in third and "Hallo" not in composer
    assert "Person A mag Kaffee." in composer
    assert contexts_beside_head({"memory_entries": entries[1:2]}) == ("", "")


def test_a_state_without_entries_keeps_its_rendered_memory() -> None:
    state = {"memory_context": "- (kzg) x", "memory_context_composer": "- (kzg) y"}
    assert contexts_beside_head(state) == ("- (kzg) x", "- (kzg) y")
