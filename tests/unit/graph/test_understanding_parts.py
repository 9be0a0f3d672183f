"""Pure parts of the understanding nodes: situation form, acute objects, bridge, memory
anchor entries, appointment windows, query-rewrite origins."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from novaberg.graph.appointments import (
    KIND_PROACTIVE,
    KIND_RANGE,
    KIND_SEARCH,
    appointment_window,
    appointments_from_rows,
    appointments_text,
)
from novaberg.graph.nodes.memory_anchor import anchor_entries, fact_lines, new_memories
from novaberg.graph.nodes.situation import (
    acute_objects,
    bridge,
    clean_situation,
    object_judgements,
)
from novaberg.graph.query_rewrite import (
    EMPTY,
    HISTORY_EMPTY,
    REWRITE,
    SWITCHED_OFF,
    TOO_LITTLE_HISTORY,
    TOO_LONG,
    accept,
    precheck,
)
from novaberg.memory.named_nodes import NamedNode

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 3, 15, 0, tzinfo=TZ)


# --- situation -------------------------------------------------------------------------------


def test_form_check_keeps_every_key_and_caps_objects() -> None:
    raw = {
        "gegenstand": "  Umzug   nach Köln ",
        "objekte": [{"name": f"O{i}", "eigenschaften": {"a": 1}} for i in range(8)]
        + [{"name": ""}, "kaputt", {"name": "O1"}],
        "angebot_angenommen": "ja",
        "offen": ["x", "x", {"nested": 1}],
    }
    cleaned = clean_situation(raw)
    assert cleaned["gegenstand"] == "Umzug nach Köln"
    assert [o["name"] for o in cleaned["objekte"]] == ["O0", "O1", "O2", "O3", "O4"]
    assert cleaned["objekte"][0]["eigenschaften"] == {"a": "1"}
    assert cleaned["angebot_angenommen"] is False  # only a real true counts
    assert cleaned["offen"] == ["x"]
    assert set(clean_situation(None)) == set(cleaned)


def test_known_property_is_not_also_open() -> None:
    obj = clean_situation(
        {
            "objekte": [
                {"name": "Bello", "eigenschaften": {"rasse": "Dackel"}, "offen": ["rasse", "alter"]}
            ]
        }
    )["objekte"][0]
    assert obj["offen"] == ["alter"]


def test_acute_objects_and_their_distance() -> None:
    situation = clean_situation(
        {
            "objekt_bezug": "Wohnung",
            "objekte": [
                {
                    "name": "Wohnung",
                    "eigenschaften": {"ort": "Köln"},
                    "offen": ["miete", "groesse"],
                },
                {"name": "Bello", "eigenschaften": {"rasse": "Dackel"}},
                {"name": "Auto", "offen": ["farbe"]},
            ],
        }
    )
    acute = acute_objects(situation, "Darf Bello mit in die neue Wohnung?")
    assert [o["name"] for o in acute] == ["Wohnung", "Bello"]
    assert object_judgements(acute) == [
        {"objekt": "Wohnung", "bekannt": 1, "strecke": 2, "status": "offen"},
        {"objekt": "Bello", "bekannt": 1, "strecke": 0, "status": "geklaert"},
    ]


def test_bridge_to_the_triggering_turn() -> None:
    then = clean_situation({"gegenstand": "Umzug", "objekte": [{"name": "Wohnung"}]})
    same = bridge("t1", then, clean_situation({"gegenstand": "umzug"}))
    assert same["gefunden"] is True
    assert same["objekte_damals"] == ["Wohnung"]
    assert same["gleicher_gegenstand"] is True
    moved = bridge("t1", then, clean_situation({"gegenstand": "Urlaub"}))
    assert moved["gleicher_gegenstand"] is False
    missing = bridge("t9", None, then)
    assert missing["gefunden"] is False and missing["ausloeser_turn_id"] == "t9"


# --- memory anchor ---------------------------------------------------------------------------


def test_anchor_groups_go_in_front_with_facts_then_memories() -> None:
    obj = {"name": "Bello", "eigenschaften": {"rasse": "Dackel"}}
    memories = new_memories(
        [NamedNode(1, "Bello bellt nachts."), NamedNode(2, "Bello ist 3.")],
        known_ids={2},
    )
    assert [m["knoten_id"] for m in memories] == [1]
    entries = anchor_entries(
        [{"name": "Bello", "fakten": fact_lines(obj), "erinnerungen": memories}]
    )
    assert [e["inhalt"] for e in entries] == ["Bello: rasse = Dackel", "Bello bellt nachts."]
    assert entries[0]["quelle"] == "Fakten zu Bello"


def test_new_memories_respect_the_limit() -> None:
    found = [NamedNode(i, f"m{i}") for i in range(5)]
    assert len(new_memories(found, set(), limit=3)) == 3
    assert new_memories(found, set(), limit=0) == []


# --- appointments ----------------------------------------------------------------------------


def test_no_question_reads_today_and_tomorrow() -> None:
    window = appointment_window(False, {}, NOW, TZ)
    assert window.kind == KIND_PROACTIVE
    assert window.start == datetime(2026, 12, 3, tzinfo=TZ)
    assert window.end == datetime(2026, 12, 5, tzinfo=TZ)
    assert window.unreadable == ""


def test_range_with_a_date_is_that_whole_day() -> None:
    window = appointment_window(True, {"type": "range", "date": "2026-12-10"}, NOW, TZ)
    assert (window.kind, window.start, window.end) == (
        KIND_RANGE,
        datetime(2026, 12, 10, tzinfo=TZ),
        datetime(2026, 12, 11, tzinfo=TZ),
    )
    spanning = appointment_window(
        True, {"type": "range", "from": "2026-12-10", "to": "2026-12-12"}, NOW, TZ
    )
    assert spanning.end == datetime(2026, 12, 13, tzinfo=TZ)


def test_range_with_only_a_direction() -> None:
    back = appointment_window(True, {"type": "range", "direction": "backward"}, NOW, TZ)
    assert back.end == NOW and back.start is not None and back.start < NOW


@pytest.mark.parametrize(
    "query",
    [
        {"type": "store"},
        {"type": "range", "from": "gestern"},
        {"type": "range", "from": "2026-12-10", "to": "2026-12-01"},
        {"type": "search", "keyword": " "},
        {"type": "range", "direction": "seitwaerts"},
    ],
)
def test_unreadable_question_is_flagged_and_reads_proactively(query: dict[str, str]) -> None:
    window = appointment_window(True, query, NOW, TZ)
    assert window.kind == KIND_PROACTIVE
    assert window.unreadable


def test_search_by_keyword() -> None:
    window = appointment_window(True, {"type": "search", "keyword": "Zahnarzt"}, NOW, TZ)
    assert (window.kind, window.search) == (KIND_SEARCH, "Zahnarzt")


def test_rows_become_appointments_and_anchors_are_dropped() -> None:
    moment = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
    rows = [
        {
            "id": 1,
            "event_time": moment,
            "title": "Zahnarzt",
            "event_type": "termin",
            "precision": "minute",
        },
        {"id": 2, "event_time": moment, "title": "Tag", "event_type": "erinnerungs_anker"},
        {"id": 3, "event_time": None, "title": "kaputt"},
    ]
    items, dropped = appointments_from_rows(rows, TZ)
    assert dropped == 2
    assert items[0]["zeit"] == "Fr 04.12.2026 10:30"
    text = appointments_text({"termine": items, "failed": False})
    assert "Zahnarzt" in text and "10:30" in text
    assert appointments_text({"termine": [], "failed": True}).startswith("Die Termine konnten")
    assert appointments_text(None) == ""


# --- query rewrite ---------------------------------------------------------------------------

TWO = [{"rolle": "user", "inhalt": "Ich ziehe nach Köln."}, {"rolle": "user", "inhalt": "Wann?"}]


def test_precheck_origins() -> None:
    assert precheck(False, TWO) == SWITCHED_OFF
    assert precheck(True, TWO[:1]) == TOO_LITTLE_HISTORY
    assert precheck(True, [{"inhalt": ""}, {"inhalt": " "}]) == HISTORY_EMPTY
    assert precheck(True, TWO) is None


def test_accept_origins() -> None:
    assert accept("roh", "\n  Wann zieht der Nutzer nach Köln?\nmehr").text == (
        "Wann zieht der Nutzer nach Köln?"
    )
    assert accept("roh", "Wann?").origin == REWRITE
    assert (accept("roh", "  \n").text, accept("roh", "").origin) == ("roh", EMPTY)
    long = accept("roh", "x" * 301)
    assert (long.text, long.origin) == ("roh", TOO_LONG)
    assert accept("roh", "x" * 300).origin == REWRITE
