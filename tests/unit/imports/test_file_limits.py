"""Files over a limit are refused before the costly part — with a sentence naming the limit,
the figure and the setting — and what is skipped is reported bounded: the first 100
problems and the count of all."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from novaberg.bounded_json import TooDeep
from novaberg.imports.cards import read_card
from novaberg.imports.chat_formats import PROBLEMS_LISTED, parse_chat
from novaberg.imports.limits import DEFAULT_LIMITS, TooLarge

TZ = ZoneInfo("UTC")
LIMITS = replace(
    DEFAULT_LIMITS,
    card_bytes=64 * 1024,
    card_field_chars=1000,
    lore_entries=10,
    import_bytes=64 * 1024,
    import_lines=100,
)


def card(**data: Any) -> dict[str, Any]:
    return {"spec": "chara_card_v2", "data": {"name": "Käthe", "description": "Moin.", **data}}


def book(entries: int, content: str = "Flint ist der Hund.") -> dict[str, Any]:
    return {"entries": [{"keys": [f"k{i}"], "content": content} for i in range(entries)]}


def turn(i: int) -> str:
    return json.dumps({"id": f"t{i}", "speaker": "user", "text": f"Satz {i}", "time": i + 1})


def test_a_lorebook_over_its_limit_is_refused_in_words() -> None:
    with pytest.raises(TooLarge) as refused:
        read_card(json.dumps(card(character_book=book(11))).encode(), LIMITS)
    assert str(refused.value) == (
        "the card's lorebook has 11 entries, over the limit of 10 entries "
        "(NOVABERG_MAX_LORE_ENTRIES)"
    )
    assert len(read_card(json.dumps(card(character_book=book(10))).encode(), LIMITS).lore) == 10


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"description": "x" * 1001}, "the card's field 'description' has 1,001 characters"),
        ({"first_mes": "x" * 5000}, "the card's field 'first_mes' has 5,000 characters"),
        ({"character_book": book(3, "y" * 1001)}, "the card's lorebook entry 1 has 1,001"),
    ],
)
def test_a_card_field_over_its_limit_is_refused_in_words(fields: dict, named: str) -> None:
    with pytest.raises(TooLarge, match="NOVABERG_MAX_CARD_FIELD_CHARS") as refused:
        read_card(json.dumps(card(**fields)).encode(), LIMITS)
    assert str(refused.value).startswith(named)
    assert "over the limit of 1,000" in str(refused.value)


def test_a_card_file_over_its_size_is_refused_before_it_is_read() -> None:
    with pytest.raises(TooLarge, match=r"has 65,537 bytes, .*\(NOVABERG_MAX_CARD_BYTES\)"):
        read_card(b"{" * (64 * 1024 + 1), LIMITS)


def test_a_deep_card_is_too_deep_as_json_and_in_a_png(card_png) -> None:  # type: ignore[no-untyped-def]
    nested: list[Any] = []
    for _ in range(400):  # where json.loads and the card's own checks used to recurse out
        nested = [nested]
    deep = card(extensions={"x": nested})
    with pytest.raises(TooDeep):
        read_card(json.dumps(deep).encode(), LIMITS)
    with pytest.raises(TooDeep):
        read_card(card_png(deep, "chara"), LIMITS)


def test_a_chat_export_over_its_lines_is_refused_before_a_line_is_parsed() -> None:
    junk = "\n".join(["{junk"] * 101).encode()  # parsed, it would be "no line is JSON"
    with pytest.raises(TooLarge) as refused:
        parse_chat(junk, tz=TZ, limits=LIMITS)
    assert str(refused.value) == (
        "the chat export has 101 lines, over the limit of 100 lines (NOVABERG_MAX_IMPORT_LINES)"
    )
    assert len(parse_chat("\n".join(turn(i) for i in range(100)).encode(), tz=TZ).turns) == 100


def test_a_chatgpt_export_over_its_messages_is_refused() -> None:
    mapping = {
        f"m{i}": {"message": {"id": f"m{i}", "author": {"role": "user"}, "create_time": i + 1,
                               "content": {"parts": [f"Satz {i}"]}}}
        for i in range(101)
    }  # fmt: skip
    with pytest.raises(TooLarge, match="has 101 messages, over the limit of 100 messages"):
        parse_chat(json.dumps([{"mapping": mapping}]).encode(), tz=TZ, limits=LIMITS)


def test_a_chat_export_over_its_size_is_refused() -> None:
    with pytest.raises(TooLarge, match=r"\(NOVABERG_MAX_IMPORT_BYTES\)"):
        parse_chat(b" " * (64 * 1024 + 1), tz=TZ, limits=LIMITS)


def test_a_report_lists_the_first_problems_and_counts_all() -> None:
    lines = [turn(0)] + [
        "{broken"
        if i % 2
        else json.dumps({"id": f"x{i}", "speaker": "bot", "text": "?", "time": 1})
        for i in range(1, 5001)
    ]
    parsed = parse_chat("\n".join(lines).encode(), tz=TZ)
    assert len(parsed.turns) == 1
    assert parsed.problem_count == 5000
    assert len(parsed.problems) == PROBLEMS_LISTED == 100
    assert [p.where for p in parsed.problems] == [f"line {n}" for n in range(2, 102)]


def test_a_deep_jsonl_line_is_skipped_and_a_deep_json_export_refused() -> None:
    deep = '{"id": "d", "speaker": "user", "text": ' + "[" * 5000 + "]" * 5000 + "}"
    parsed = parse_chat(f"{turn(0)}\n{deep}\n{turn(2)}".encode(), tz=TZ)
    assert [t.source_id for t in parsed.turns] == ["t0", "t2"]
    assert [str(p) for p in parsed.problems] == ["line 2: nested deeper than 64"]
    with pytest.raises(TooDeep):
        parse_chat(("[" * 3000 + "]" * 3000).encode(), tz=TZ)


def test_jsonl_lines_are_split_at_newlines_only() -> None:
    """U+2028 is a line break to `str.splitlines` but text inside a JSON string."""
    text = "erste Zeile\u2028zweite Zeile"
    line = json.dumps({"id": "a", "speaker": "user", "text": text, "time": 1}, ensure_ascii=False)
    parsed = parse_chat(f"{line}\n{turn(1)}".encode(), tz=TZ)
    assert [t.text for t in parsed.turns] == [text, "Satz 1"]
    assert parsed.problems == []


def test_a_line_with_a_lone_surrogate_is_skipped() -> None:
    bad = '{"id": "s", "speaker": "user", "text": "kaputt \\ud800", "time": 1}'
    parsed = parse_chat(f"{turn(0)}\n{bad}\n{turn(2)}".encode(), tz=TZ)
    assert [t.source_id for t in parsed.turns] == ["t0", "t2"]
    assert [str(p) for p in parsed.problems] == [
        "line 2: a string holds a lone surrogate (not UTF-8)"
    ]


def test_a_chatgpt_conversation_with_a_lone_surrogate_is_skipped() -> None:
    def conversation(text: str) -> dict[str, Any]:
        message = {"id": text[:3], "author": {"role": "user"}, "create_time": 1}
        message["content"] = {"parts": [text]}
        return {"mapping": {"m": {"message": message}}}

    data = json.dumps([conversation("Hallo"), conversation("kaputt \ud800")]).encode()
    parsed = parse_chat(data, tz=TZ)
    assert [t.text for t in parsed.turns] == ["Hallo"]
    assert [str(p) for p in parsed.problems] == ["conversation 2: a string holds a lone surrogate"]
