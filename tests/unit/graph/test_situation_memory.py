"""The situation memory's pure parts: objects as the store takes them, the
`objekt_entitaeten` channel and the offered-values block."""

from __future__ import annotations

from novaberg.graph.nodes.situation_memory import entity_channel, objects_seen, offered_text
from novaberg.memory.situation_objects import ObjectSeen, StoredObject

SITUATION = {
    "objekte": [
        {"name": "Bello", "eigenschaften": {"rasse": "Dackel"}, "offen": ["alter"]},
        {"name": "Wohnung", "eigenschaften": {}, "offen": []},
    ],
    "objekt_bezug": "wohnung",
}


def test_objects_seen_marks_reference_and_acute() -> None:
    assert objects_seen(SITUATION, ["Bello"]) == [
        ObjectSeen("Bello", {"rasse": "Dackel"}, ("alter",), reference=False, acute=True),
        ObjectSeen("Wohnung", {}, (), reference=True, acute=False),
    ]


def test_entity_channel_lists_bound_acute_objects_in_acute_order() -> None:
    objects = [
        StoredObject(1, "Bello", entity_id=7),
        StoredObject(2, "Wohnung", entity_id=None),
        StoredObject(3, "Köln", entity_id=9),
    ]
    assert entity_channel(objects, ["Köln", "wohnung", "bello"]) == [
        {"objekt": "Köln", "entitaet_id": 9},
        {"objekt": "bello", "entitaet_id": 7},
    ]


def test_offered_text_skips_objects_without_values() -> None:
    objects = [
        StoredObject(1, "Fahrrad", properties={"farbe": "blau", "marke": "Gazelle"}),
        StoredObject(2, "Wohnung"),
    ]
    assert offered_text(objects) == "Objekt Fahrrad: farbe=blau, marke=Gazelle"
    assert offered_text([StoredObject(2, "Wohnung")]) == ""
