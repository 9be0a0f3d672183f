"""Character cards V1/V2/V3 from JSON and from PNG text chunks; anything else is refused."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from novaberg.imports.cards import (
    MAX_ALTERNATE_GREETINGS,
    CardError,
    character_id_for,
    parse_card,
    read_card,
)
from novaberg.imports.limits import DEFAULT_LIMITS, TooLarge

V2: dict[str, Any] = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Käthe Brünnhilde",
        "description": "Eine Leuchtturmwärterin an der Nordsee.",
        "personality": "wortkarg, herzlich",
        "scenario": "Ein stürmischer Abend im Leuchtturm.",
        "first_mes": "*schaut vom Logbuch auf* Na, auch unterwegs bei dem Wetter?",
        "mes_example": "<START>\n{{user}}: Hallo\n{{char}}: Moin.",
        "system_prompt": "Bleib in deiner Rolle.",
        "character_book": {
            "entries": [
                {
                    "keys": ["Leuchtturm", "Roter Sand"],
                    "content": "Der Leuchtturm Roter Sand steht seit 1885.",
                    "enabled": True,
                    "insertion_order": 0,
                    "id": 7,
                },
                {
                    "keys": ["Hund"],
                    "content": "Käthes Hund heißt Flint.",
                    "enabled": True,
                    "insertion_order": 1,
                },
                {
                    "keys": ["Geheim"],
                    "content": "Abgeschaltet.",
                    "enabled": False,
                    "insertion_order": 2,
                },
                {"keys": ["Leer"], "content": "  ", "enabled": True, "insertion_order": 3},
            ]
        },
    },
}


def test_a_v2_card_gives_every_field_and_the_enabled_lore() -> None:
    card = parse_card(V2)
    assert card.spec == "v2" and card.name == "Käthe Brünnhilde"
    assert card.description.startswith("Eine Leuchtturmwärterin")
    assert card.personality == "wortkarg, herzlich" and card.scenario.startswith("Ein stürmischer")
    assert card.first_message.startswith("*schaut") and "{{char}}" in card.example_dialogue
    assert card.system_prompt == "Bleib in deiner Rolle."
    assert [(e.ident, e.keys) for e in card.lore] == [
        ("7", ("Leuchtturm", "Roter Sand")),
        ("1", ("Hund",)),
    ], "disabled and empty entries are left out; an entry without id keeps its position"
    assert card.digest == parse_card(json.loads(json.dumps(V2))).digest


def test_v3_and_v1_cards() -> None:
    v3 = parse_card({**V2, "spec": "chara_card_v3", "spec_version": "3.0"})
    assert v3.spec == "v3" and len(v3.lore) == 2
    v1 = parse_card({"name": "Rex", "description": "Ein Hund.", "first_mes": "Wuff!"})
    assert (v1.spec, v1.name, v1.first_message, v1.lore) == ("v1", "Rex", "Wuff!", ())


def test_the_card_is_read_from_a_png_chunk_ccv3_first(card_png) -> None:  # type: ignore[no-untyped-def]
    v3 = {**V2, "spec": "chara_card_v3", "data": {**V2["data"], "name": "Neue Käthe"}}
    png = card_png(V2, "chara", ccv3=v3)
    assert read_card(png).name == "Neue Käthe"
    assert read_card(card_png(V2, "chara")).name == "Käthe Brünnhilde"
    assert read_card(json.dumps(V2).encode()).name == "Käthe Brünnhilde"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, "truncated"),
        (b"{not json", "broken JSON"),
        (b'{"spec": "chara_card_v2"}', "no 'data' object"),
        (b'{"hello": "world"}', "not a character card"),
        (b"[1, 2]", "not an object"),
        (b'{"spec": "chara_card_v2", "data": {"name": " "}}', "no name"),
        (b"\xff\xfe\x00garbage", "neither a PNG nor UTF-8"),
        (b'{"name": "A\\u0000B", "description": "x"}', "no valid UTF-8"),
        (b'{"name": "A", "description": "\\ud800"}', "no valid UTF-8"),
    ],
)
def test_what_is_not_a_card_is_refused_in_one_line(data: bytes, message: str) -> None:
    with pytest.raises(CardError, match=message) as caught:
        read_card(data)
    assert "\n" not in str(caught.value)


def test_a_png_without_a_card_is_refused(text_png) -> None:  # type: ignore[no-untyped-def]
    png_with_text = text_png
    with pytest.raises(CardError, match="PNG without a character card"):
        read_card(png_with_text({"Comment": b"just a picture"}))
    with pytest.raises(CardError, match="not base64 JSON"):
        read_card(png_with_text({"chara": b"!!!not base64 json!!!"}))


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Käthe Brünnhilde", "kaethe-bruennhilde"),
        ("  Señor Ñandú  ", "senor-nandu"),
        ("R2-D2", "r2-d2"),
        ("Dr. Who?", "dr.-who"),
        ("株式会社", ""),
    ],
)
def test_character_ids_come_from_the_name(name: str, slug: str) -> None:
    assert character_id_for(name) == slug


def test_a_png_cards_picture_is_kept_without_the_card(card_png) -> None:  # type: ignore[no-untyped-def]
    png = card_png(V2, "chara", ccv3={**V2, "spec": "chara_card_v3"}, Comment="Bild")
    card = read_card(png)
    assert card.image is not None and card.image.startswith(b"\x89PNG\r\n\x1a\n")
    assert b"chara" not in card.image and b"ccv3" not in card.image
    assert b"Comment" in card.image, "other chunks stay"
    assert len(png) - len(card.image) > 2 * len(json.dumps(V2)), "both card chunks left out"
    assert card.image.endswith(b"IEND\xaeB`\x82")
    assert read_card(json.dumps(V2).encode()).image is None


def test_alternate_greetings_are_kept_in_order_blank_and_non_text_left_out() -> None:
    card = parse_card(
        {
            "spec": "chara_card_v3",
            "data": {
                "name": "Tove",
                "first_mes": "Hej!",
                "alternate_greetings": [" Moin. ", "", 3, None, "Na?"],
            },
        }
    )
    assert card.alternate_greetings == ("Moin.", "Na?")
    assert parse_card({"spec": "chara_card_v2", "data": {"name": "A"}}).alternate_greetings == ()
    many = {"name": "B", "alternate_greetings": [f"G{i}" for i in range(40)]}
    assert len(parse_card({"data": many}).alternate_greetings) == MAX_ALTERNATE_GREETINGS


def test_an_alternate_greeting_over_the_field_limit_refuses_the_card() -> None:
    limits = replace(DEFAULT_LIMITS, card_field_chars=10)
    with pytest.raises(TooLarge, match="alternate greeting 2"):
        parse_card({"data": {"name": "C", "alternate_greetings": ["ok", "x" * 11]}}, limits)
