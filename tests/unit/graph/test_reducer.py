"""Reducer: exact + substring dedup and the two context renderings (seed 002 §4.4)."""

from __future__ import annotations

from dataclasses import dataclass

from novaberg.graph.nodes.reducer import (
    MAX_CONTEXT_ENTRIES,
    dedupe_entries,
    reducer,
    render_contexts,
    to_composer_names,
)


@dataclass
class Entry:
    """Stands in for memory.context.ContextEntry (attribute access)."""

    quelle: str
    inhalt: str
    gewicht: float


def _texts(entries: list) -> list[str]:
    return [e["inhalt"] if isinstance(e, dict) else e.inhalt for e in entries]


def test_exact_dedup_on_lowercase_collapsed_whitespace_keeps_highest_weight() -> None:
    entries = [
        {"quelle": "kzg", "inhalt": "Der Nutzer mag  Katzen.", "gewicht": 0.4},
        {"quelle": "lzg", "inhalt": "der nutzer mag katzen.", "gewicht": 0.9},
        {"quelle": "kzg", "inhalt": "DER NUTZER MAG KATZEN.\n", "gewicht": 0.5},
    ]
    (kept,) = dedupe_entries(entries)
    assert kept["quelle"] == "lzg" and kept["gewicht"] == 0.9


def test_substring_dedup_drops_contained_texts_of_ten_chars_or_more() -> None:
    entries = [
        Entry("kzg", "mag Katzen", 0.9),  # 10 chars, inside the longer one → dropped
        Entry("kzg", "Der Nutzer mag Katzen und Hunde.", 0.3),
        Entry("kzg", "Katze", 0.8),  # < 10 chars → kept even though contained
        Entry("lzg", "Nova war in Köln.", 0.5),
    ]
    kept = dedupe_entries(entries)
    assert _texts(kept) == ["Katze", "Nova war in Köln.", "Der Nutzer mag Katzen und Hunde."]


def test_mixed_dicts_and_objects_and_empty_text_dropped() -> None:
    entries = [
        Entry("kzg", "Erste Erinnerung hier", 0.2),
        {"quelle": "x", "inhalt": "  ", "gewicht": 1},
    ]
    assert _texts(dedupe_entries(entries)) == ["Erste Erinnerung hier"]


def test_render_two_versions() -> None:
    entries = [Entry("kzg", "Nova hat dem Nutzer von Köln erzählt.", 0.8)]
    third, composer = render_contexts(entries, "Nova")
    assert third.startswith("Was Nova über das Gespräch mit dem Nutzer weiß:")
    assert "- (kzg) Nova hat dem Nutzer von Köln erzählt." in third
    assert "Nova" not in composer and "Nutzer" not in composer
    assert "Person B hat Person A von Köln erzählt." in composer
    assert composer.startswith("Was Person B über das Gespräch mit Person A weiß:")


def test_composer_names_forms() -> None:
    assert (
        to_composer_names("Der Nutzer mag Novas Katze.", "Nova")
        == "Person A mag von Person B Katze."
    )
    assert to_composer_names("Die Nutzerin und Nova", "Nova") == "Person A und Person B"


def test_render_caps_entries() -> None:
    entries = [
        Entry("kzg", f"Erinnerung Nummer {i} ist lang genug", 1.0 - i / 100) for i in range(12)
    ]
    third, _ = render_contexts(entries, "Nova")
    assert third.count("\n- ") == MAX_CONTEXT_ENTRIES


async def test_node_writes_both_contexts_on_every_path() -> None:
    empty = await reducer({"character_id": "nova"}, None)  # type: ignore[arg-type]
    assert empty["memory_context"] == "" and empty["memory_context_composer"] == ""
    assert empty["memory_entries"] == []
    full = await reducer(
        {
            "character_id": "nova",
            "memory_entries_raw": [
                {"quelle": "kzg", "inhalt": "Nova mag Tee.", "gewicht": 0.5},
                {"quelle": "kzg", "inhalt": "nova mag tee.", "gewicht": 0.7},
            ],
        },
        None,  # type: ignore[arg-type]
    )
    assert len(full["memory_entries"]) == 1 and full["memory_entries"][0]["gewicht"] == 0.7
    assert "- (kzg) nova mag tee." in full["memory_context"]  # the heavier spelling wins
    assert "- (kzg) Person B mag tee." in full["memory_context_composer"]
