"""Chat exports → turns: the three formats, malformed lines with their numbers, bad files
refused as a whole."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from novaberg.imports.chat_formats import ChatFormatError, parse_chat

TZ = ZoneInfo("Europe/Berlin")


def jsonl(*objects: Any) -> bytes:
    return "\n".join(o if isinstance(o, str) else json.dumps(o) for o in objects).encode()


def test_plain_jsonl_keeps_ids_and_reports_bad_lines_by_number() -> None:
    data = jsonl(
        {"id": "a1", "speaker": "user", "text": "Hallo Nova", "time": "2026-01-10T10:00:00+01:00"},
        {"id": 2, "speaker": "character", "text": "Hallo!", "time": 1768035630},
        "{broken",
        {"id": "a4", "speaker": "bot", "text": "x", "time": "2026-01-10T10:01:00"},
        {"id": "a5", "speaker": "user", "time": "2026-01-10T10:01:00"},
        {"id": "a1", "speaker": "user", "text": "again", "time": "2026-01-10T10:02:00"},
        {"id": "a7", "speaker": "user", "text": "   ", "time": "2026-01-10T10:03:00"},
        {"id": "a8", "speaker": "user", "text": "Zeitlos"},
        {"id": "a9", "speaker": "user", "text": "Ohne Zone", "time": "2026-07-01T12:00:00"},
    )
    parsed = parse_chat(data, tz=TZ, name="mein.jsonl")
    assert parsed.format == "jsonl"
    assert [(t.source_id, t.speaker, t.line) for t in parsed.turns] == [
        ("a1", "user", 1),
        ("2", "character", 2),
        ("a9", "user", 9),
    ]
    assert parsed.turns[1].time == datetime.fromtimestamp(1768035630, UTC)
    assert parsed.turns[2].time.utcoffset().total_seconds() == 7200, "zone-less → local zone"
    assert {t.conversation for t in parsed.turns} == {"mein.jsonl"}
    assert [str(p) for p in parsed.problems] == [
        "line 3: broken JSON (Expecting property name enclosed in double quotes)",
        "line 4: speaker must be 'user' or 'character', not 'bot'",
        "line 5: text is not a string",
        "line 6: id 'a1' repeated",
        "line 8: time missing",
    ]
    assert parsed.ignored == 1  # the blank text


def test_a_time_of_unicode_digits_is_a_bad_line_not_a_crash() -> None:
    """ "²" is a digit to `str.isdigit` but no number to float(): the line is skipped with
    its reason, like any other unreadable time."""
    data = jsonl(
        {"id": "a1", "speaker": "user", "text": "Hallo", "time": "2026-01-10T10:00:00+01:00"},
        {"id": "a2", "speaker": "user", "text": "Hoch zwei", "time": "²"},
    )
    parsed = parse_chat(data, tz=TZ, name="x.jsonl")
    assert [t.source_id for t in parsed.turns] == ["a1"]
    assert [p.where for p in parsed.problems] == ["line 2"]


def test_sillytavern_jsonl() -> None:
    data = jsonl(
        {
            "user_name": "Anna",
            "character_name": "Seraphina",
            "create_date": "2024-06-20@15h45m30s",
            "chat_metadata": {},
        },
        {
            "name": "Seraphina",
            "is_user": False,
            "is_system": False,
            "send_date": "June 20, 2024 3:45pm",
            "mes": "Willkommen im Wald.",
        },
        {
            "name": "Anna",
            "is_user": True,
            "is_system": False,
            "send_date": "June 20, 2024 3:46pm",
            "mes": "Danke!",
            "swipes": ["Danke!"],
        },
        {
            "name": "System",
            "is_user": False,
            "is_system": True,
            "send_date": "June 20, 2024 3:46pm",
            "mes": "[note]",
        },
        {"name": "Anna", "is_user": True, "send_date": 1718898420000, "mes": "Danke!"},
        {"name": "Anna", "is_user": True, "send_date": "June 20, 2024 3:46pm", "mes": "Danke!"},
        {
            "name": "Anna",
            "is_user": True,
            "send_date": "sometime",
            "mes": "Zeit fehlt, Vorgänger zählt",
        },
        {"name": "Anna", "is_user": True, "send_date": "June 20, 2024 3:47pm"},
    )
    parsed = parse_chat(data, tz=TZ, name="Seraphina.jsonl")
    assert parsed.format == "sillytavern"
    assert [t.speaker for t in parsed.turns] == ["character", "user", "user", "user", "user"]
    assert parsed.turns[0].time == datetime(2024, 6, 20, 15, 45, tzinfo=TZ)
    assert parsed.turns[2].time == datetime.fromtimestamp(1718898420, UTC)
    ids = [t.source_id for t in parsed.turns]
    assert len(set(ids)) == 5 and ids[3] == ids[1] + "#1", "an identical message is kept, numbered"
    assert parsed.turns[4].time == parsed.turns[3].time
    assert {t.conversation for t in parsed.turns} == {"2024-06-20@15h45m30s"}
    assert parsed.ignored == 1
    assert [str(p) for p in parsed.problems] == ["line 8: no message text (mes)"]
    again = parse_chat(data, tz=TZ, name="renamed.jsonl")
    assert [t.source_id for t in again.turns] == ids, "ids come from the messages, not the file"


def _node(nid: str, parent: str | None, role: str | None, text: Any, t: float | None) -> dict:
    message = None
    if role is not None:
        message = {
            "id": f"m-{nid}",
            "author": {"role": role},
            "create_time": t,
            "content": {"content_type": "text", "parts": text},
        }
    return {"id": nid, "parent": parent, "children": [], "message": message}


def test_chatgpt_follows_the_branch_ending_at_current_node() -> None:
    conversation = {
        "id": "conv-1",
        "title": "Hunde",
        "create_time": 1700000000.0,
        "current_node": "d",
        "mapping": {
            "root": _node("root", None, None, None, None),
            "s": _node("s", "root", "system", [""], None),
            "a": _node("a", "s", "user", ["Wie heißt ein guter Hundename?"], 1700000001.0),
            "b1": _node("b1", "a", "assistant", ["Verworfen"], 1700000002.0),
            "b": _node(
                "b", "a", "assistant", ["Bello ", {"asset": "img"}, "oder Rex."], 1700000003.0
            ),
            "c": _node("c", "b", "tool", ["tool output"], 1700000004.0),
            "d": _node("d", "c", "user", ["Danke"], None),
        },
    }
    parsed = parse_chat(json.dumps([conversation]).encode(), tz=TZ)
    assert parsed.format == "chatgpt"
    assert [(t.source_id, t.speaker, t.text) for t in parsed.turns] == [
        ("m-a", "user", "Wie heißt ein guter Hundename?"),
        ("m-b", "character", "Bello \noder Rex."),
        ("m-d", "user", "Danke"),
    ]
    assert parsed.turns[2].time == datetime.fromtimestamp(1700000000.0, UTC), "the conversation's"
    assert parsed.ignored == 2  # the system and tool messages
    assert {t.conversation for t in parsed.turns} == {"conv-1"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"   \n  ", "empty"),
        (b"\xff\xfe\x00\x01", "not UTF-8"),
        (b"hello world", "not a chat export"),
        (b'[{"mapping": {}}, 1', "broken JSON"),
        (b'[{"title": "x"}]', "not ChatGPT's conversations.json"),
        (b"{broken\n{also broken", "no line is a JSON object"),
        (b'{"a": 1}\n{"b": 2}', "no line looks like a chat turn"),
        (b'{"id": "1", "speaker": "nobody", "text": "x", "time": 1}', "no importable turn"),
        (
            b'[{"mapping": {"n": {"message": {"author": {"role": "system"}, "content": {"parts": ["x"]}}}}}]',
            "no importable turn",
        ),
    ],
)
def test_a_bad_file_is_refused_as_a_whole_in_one_line(data: bytes, message: str) -> None:
    with pytest.raises(ChatFormatError, match=message) as caught:
        parse_chat(data, tz=TZ)
    assert "\n" not in str(caught.value)


def test_speaker_names_are_kept_from_sillytavern_and_plain_lines() -> None:
    group = jsonl(
        {"user_name": "Sam", "character_name": "Nova", "create_date": "2024-06-20@15h45m30s"},
        {"name": "Lena", "is_user": False, "send_date": "June 20, 2024 3:45pm", "mes": "Hi!"},
        {"name": "Sam", "is_user": True, "send_date": "June 20, 2024 3:46pm", "mes": "Hey."},
        {"name": 7, "is_user": False, "send_date": "June 20, 2024 3:47pm", "mes": "Odd."},
    )
    assert [t.name for t in parse_chat(group, tz=TZ).turns] == ["Lena", "Sam", None]
    plain = jsonl(
        {"id": "1", "speaker": "character", "text": "Hallo", "time": 1718898420, "name": " Tom "},
        {"id": "2", "speaker": "user", "text": "Na?", "time": 1718898480},
    )
    assert [t.name for t in parse_chat(plain, tz=TZ).turns] == ["Tom", None]
