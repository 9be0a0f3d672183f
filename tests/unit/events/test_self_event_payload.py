"""Payload rules of a self-event (docs/behaviour/events.md#payload-rules): a `continue` with
`absicht` or `commitment` is a turn of Nova's own, with its own turn id and the turn it
follows; one that breaks a rule is rejected, never repaired."""

from __future__ import annotations

from typing import Any

import pytest

from novaberg.events.model import EventRejected, build_event


def follow_up(**payload: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "turn_id": "t-2",
        "ausloeser_turn_id": "t-1",
        "eigener_gedanke": "Ich möchte nachfragen.",
        "reiz_herkunft": "eigener_impuls",
        "gedanke_arousal": 0.4,
        "absicht": "nachfragen",
    }
    base.update(payload)
    return {k: v for k, v in base.items() if v is not ...}


def event(payload: dict[str, Any]) -> Any:
    return build_event(
        user_id="anna",
        character_id="nova",
        source="character",
        typ="continue",
        payload=payload,
        trigger_count=1,
    )


def test_a_well_formed_self_event_is_accepted() -> None:
    accepted = event(follow_up())
    assert accepted.is_self_event and accepted.turn_id == "t-2"
    assert accepted.message_ids == []
    assert event(follow_up(absicht=..., commitment="recherche")).is_self_event
    assert event(follow_up(gedanke_arousal=None)).is_self_event


def test_the_thinker_retry_is_no_self_event() -> None:
    retry = event({"turn_id": "t-1", "user_prompt": "Wann?", "thinker_unsicher_retry": True})
    assert not retry.is_self_event


@pytest.mark.parametrize(
    ("payload", "rule"),
    [
        (follow_up(ausloeser_turn_id="t-2"), "turn of its own"),
        (follow_up(ausloeser_turn_id=...), "ausloeser_turn_id"),
        (follow_up(reiz_herkunft="nutzer_turn"), "eigener_impuls"),
        (follow_up(eigener_gedanke=" "), "eigener_gedanke"),
        (follow_up(user_prompt="Hallo"), "user_prompt"),
        (follow_up(gedanke_arousal=...), "gedanke_arousal"),
        (follow_up(gedanke_arousal=1.5), "outside"),
        (follow_up(gedanke_arousal=True), "number"),
        (follow_up(absicht="plaudern"), "absicht"),
        (follow_up(absicht=..., commitment="einkaufen"), "commitment"),
        (follow_up(thinker_unsicher_retry=True), "retry"),
    ],
)
def test_a_broken_self_event_is_rejected(payload: dict[str, Any], rule: str) -> None:
    with pytest.raises(EventRejected, match=rule):
        event(payload)
