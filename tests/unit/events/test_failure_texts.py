"""The texts a failure keeps for the history come from the block or the event, also when
part of it cannot be read."""

from __future__ import annotations

import json

from novaberg.events.event_consumer import event_prompts, raw_prompts
from novaberg.events.prompt_consumer import block_prompts
from novaberg.events.queues import Claimed


def _item(text: str, n: int) -> str:
    return json.dumps({"nachrichten_id": f"m{n}", "prompt": text, "empfangen_am": 1.0 + n})


def test_a_blocks_texts_in_order_unreadable_items_left_out() -> None:
    entry = Claimed.parse(
        json.dumps({"art": "block", "items": [_item("eins", 1), "{kaputt", _item("zwei", 2)]})
    )
    assert block_prompts(entry) == ["eins", "zwei"]
    assert block_prompts(Claimed.parse("nicht einmal JSON")) == []


def test_an_events_user_prompt_only_from_the_user() -> None:
    assert event_prompts({"user_prompt": "Hallo\nnoch was"}) == ["Hallo\nnoch was"]
    assert event_prompts({"user_prompt": ""}) == [] and event_prompts({}) == []
    user = {"source": "user", "payload": {"turn_id": "t", "user_prompt": "Hallo"}}
    assert raw_prompts(json.dumps(user)) == ["Hallo"]
    own = {"source": "character", "payload": {"turn_id": "t", "user_prompt": "Hallo"}}
    assert raw_prompts(json.dumps(own)) == []
    assert raw_prompts("{kaputt") == [] and raw_prompts("[1, 2]") == []
