"""The pure parts of chats: a chat's name from its first words, its spans of time, and the
export's messages in Markdown and JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from novaberg.api.chat_export import ExportHeader, as_json, as_markdown, messages
from novaberg.api.page_api import HistoryEntry
from novaberg.store.chats import Span, open_ranges, ranges_of, title_from

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
T1 = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
T2 = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)


def test_a_title_is_the_first_words() -> None:
    assert title_from("  Hallo\n Nova ") == "Hallo Nova"
    assert title_from("eins zwei drei vier fünf sechs sieben") == "eins zwei drei vier fünf sechs…"
    long = title_from("Donaudampfschifffahrtsgesellschaftskapitänsmützenabzeichen ist lang")
    assert len(long) <= 49 and long.endswith("…")
    assert title_from("   ") == ""


def test_a_chat_holds_the_times_it_was_open() -> None:
    spans = [Span("a", None), Span("b", T0), Span("a", T1), Span("c", T2)]
    assert ranges_of(spans, "a") == [(None, T0), (T1, T2)]
    assert ranges_of(spans, "b") == [(T0, T1)]
    assert ranges_of(spans, "c") == [(T2, None)]
    assert ranges_of(spans, "gone") == []
    assert open_ranges(spans) == [(T2, None)]
    assert open_ranges([]) == [(None, None)]  # no chats yet: the whole history


def _entry(**fields: object) -> HistoryEntry:
    base: dict[str, object] = {
        "id": 1,
        "turn_id": "t1",
        "zeit": T0.timestamp(),
        "eingabe": "Hallo",
        "nachricht": "Hallo zurück",
        "reiz_herkunft": "nutzer_turn",
        "emotion": "freude",
        "arousal": 0.5,
        "user_emotion": "neugier",
        "user_arousal": 0.4,
    }
    return HistoryEntry.model_validate({**base, **fields})


def test_the_export_lists_the_messages_once_each() -> None:
    entries = [
        _entry(),
        _entry(
            turn_id="t2",
            eingabe="mir fiel ein",
            nachricht="Ich dachte an dich.",
            reiz_herkunft="eigener_impuls",
        ),
        _entry(
            turn_id="t3",
            eingabe="a\nb",
            nachricht="",
            gescheitert=True,
            grund="modell_timeout",
            eingaben=["a", "b"],
        ),
    ]
    items = messages(entries)
    assert [(m.role, m.text, m.failed) for m in items] == [
        ("user", "Hallo", False),
        ("assistant", "Hallo zurück", False),
        ("assistant", "Ich dachte an dich.", False),  # an own thought's trigger is no message
        ("user", "a", True),
        ("user", "b", True),
    ]
    header = ExportHeader("chat-1", "", "nova", "Nova", "anna", T0, T1)
    document = json.loads(as_json(header, items))
    assert document["version"] == 1 and document["exportiert_am"] == "2026-12-02T10:00:00Z"
    assert document["nachrichten"][0]["zeit"] == "2026-12-01T10:00:00Z"
    assert document["nachrichten"][0]["emotion"] == "neugier"
    assert document["nachrichten"][2]["herkunft"] == "eigener_impuls"
    md = as_markdown(header, items, "de")
    assert md.startswith("# Chat\n")  # no title yet
    assert "**Nova** · 2026-12-01 10:00 UTC (eigener Gedanke)" in md
    assert "**anna** · 2026-12-01 10:00 UTC (keine Antwort: modell_timeout)" in md
    assert "(own thought)" in as_markdown(header, items, "en")
