"""Which linked chats get an outcome, in which words, and how a long text is cut
(reach/routing.py, reach/telegram.py; docs/behaviour/reach.md#which-channel)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from novaberg.reach import routing
from novaberg.reach.outbox import Item
from novaberg.reach.telegram import MAX_TEXT, split_text
from novaberg.store.channel_links import ChannelLink


def link(link_id: int, character: str = "nova", failed: bool = False) -> ChannelLink:
    return ChannelLink(
        id=link_id,
        user_id="anna",
        kind="telegram",
        target=str(1000 + link_id),
        character_id=character,
        failed_at=datetime(2026, 12, 3, tzinfo=UTC) if failed else None,
        failure="403 Forbidden" if failed else None,
    )


def test_the_origin_always_gets_it_the_others_only_without_a_socket() -> None:
    links = [link(1), link(2), link(3, failed=True)]
    open_page = routing.targets(links, socket_open=True, origins={2})
    closed_page = routing.targets(links, socket_open=False, origins=set())
    assert [x.id for x in open_page] == [2]
    assert [x.id for x in closed_page] == [1, 2], "a failed link is never a target"
    assert routing.targets(links, socket_open=True, origins=set()) == []
    assert routing.targets(links, socket_open=True, origins={3}) == []


def test_outcomes_are_answers_and_failures_and_nothing_else() -> None:
    answer = json.dumps(
        {"seq": 4, "typ": "character_response", "character_id": "luna", "nachricht": " Hi ",
         "nachrichten_ids": ["m1"]}
    )  # fmt: skip
    failed = json.dumps({"seq": 5, "typ": "turn_gescheitert", "grund": "modell_timeout"})
    stage = json.dumps({"seq": 6, "typ": "character_stage", "node": "thinker"})
    parsed = routing.parse_outcome(answer)
    assert parsed == routing.Outcome("character_response", "luna", "Hi", ["m1"])
    assert routing.text_for(parsed, link(1)) == "luna: Hi", "another character is named"
    assert routing.text_for(parsed, link(1, character="luna")) == "Hi"
    failure = routing.parse_outcome(failed)
    assert failure is not None and failure.text == routing.FAILED_TEXT
    assert routing.parse_outcome(stage) is None
    assert routing.parse_outcome("not json") is None


def test_a_long_text_goes_out_in_parts_cut_at_spaces() -> None:
    words = ("Wort " * 2000).strip()
    parts = split_text(words)
    assert len(parts) == 3
    assert all(len(p) <= MAX_TEXT for p in parts)
    assert " ".join(parts) == words
    assert split_text("kurz") == ["kurz"]
    assert [len(p) for p in split_text("x" * (MAX_TEXT + 1))] == [MAX_TEXT, 1]


def test_an_outbox_item_round_trips_and_garbage_is_none() -> None:
    item = Item("anna", 17, 2)
    assert Item.decode(item.encode()) == item
    assert Item.decode("{}") is None
    assert Item.decode("nope") is None


def test_an_outcome_knows_whether_it_answers_is_an_impulse_or_a_reminder() -> None:
    def category(**fields: object) -> str:
        body = {"typ": "character_response", "nachricht": "Hallo", "turn_id": "t1", **fields}
        parsed = routing.parse_outcome(json.dumps(body))
        assert parsed is not None
        return parsed.category

    assert category(reiz_herkunft="nutzer_turn") == "antworten"
    assert category() == "antworten"
    assert category(reiz_herkunft="eigener_impuls", turn_id="impuls-abc") == "impulse"
    assert category(reiz_herkunft="eigener_impuls", turn_id="erinnerung-7-1764") == "erinnerungen"
    failed = routing.parse_outcome(json.dumps({"typ": "turn_gescheitert", "turn_id": "t"}))
    assert failed is not None and failed.category == "antworten"


def test_settings_leave_out_a_category_but_never_the_origin() -> None:
    links = [link(1), link(2)]

    def nothing(candidate: ChannelLink) -> bool:
        return False

    assert routing.targets(links, socket_open=False, origins=set(), wanted=nothing) == []
    chosen = routing.targets(links, socket_open=False, origins={2}, wanted=nothing)
    assert [x.id for x in chosen] == [2]


def test_an_outcome_awaited_in_place_goes_to_no_chat_but_its_origin() -> None:
    links = [link(1), link(2)]
    assert routing.targets(links, socket_open=False, origins={0}) == []
    assert [x.id for x in routing.targets(links, socket_open=False, origins={0, 2})] == [2]
