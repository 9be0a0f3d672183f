"""What an activation queues from the held events (`take_up_plan`): the person's messages
folded into one event like a block, the character's own events in their places, Path 1's
salience results folded in or given up."""

from __future__ import annotations

import json
from typing import Any

from novaberg.events.model import build_event, impulse_event, parse_event
from novaberg.events.parked import take_up_plan
from novaberg.store.keys import HUMAN_TAIL_TTL

NOW = 1_800_000_000.0


def message(turn: str, ids: list[str], text: str, at: float, **extra: Any) -> str:
    payload = {
        "turn_id": turn,
        "nachrichten_ids": ids,
        "user_prompt": text,
        "empfangen_am": at,
        "letztes_empfangen_am": at,
        "reiz_herkunft": "nutzer_turn",
        "pfad1_nachlauf": True,
        "current_emotion": f"emotion-{turn}",
        **extra,
    }
    return build_event(
        event_id=f"e-{turn}",
        user_id="anna",
        character_id="nova",
        source="user",
        typ="message",
        payload=payload,
        erstellt_am=at,
    ).wire()


def test_one_held_message_goes_back_as_it_was_when_its_salience_may_still_come() -> None:
    raw = message("t1", ["m1"], "Hallo?", NOW - 5)
    assert take_up_plan([raw], {"t1": None}, NOW) == ([raw], [])


def test_messages_fold_into_one_event_in_order_around_the_characters_own() -> None:
    impulse = impulse_event(
        "anna", "nova", "Ein Gedanke.", thought_arousal=0.4, trigger_turn_id=None
    )
    raws = [
        message("t1", ["m1"], "Ich habe bestanden!", NOW - 300),
        impulse.wire(),
        message(
            "t2", ["m2", "m3"], "Bist du da?\nHallo?", NOW - 60, pfad1_ausfall="modell_timeout"
        ),
        message("t3", ["m4"], "Nova?", NOW - 10),
    ]
    tail = {"salienz_human": 0.7, "user_intentionen": ["information_teilen"]}
    queued, dropped = take_up_plan(raws, {"t1": None, "t2": None, "t3": tail}, NOW)

    assert queued[0] == impulse.wire(), "the character's own event keeps its place"
    folded = parse_event(queued[1])
    assert len(queued) == 2
    assert folded.event_id == "e-t3" and folded.turn_id == "t3"
    assert folded.message_ids == ["m1", "m2", "m3", "m4"]
    assert folded.payload["user_prompt"] == "Ich habe bestanden!\nBist du da?\nHallo?\nNova?"
    assert folded.payload["empfangen_am"] == NOW - 300
    assert folded.payload["letztes_empfangen_am"] == NOW - 10
    assert folded.payload["current_emotion"] == "emotion-t3", "the latest perception"
    assert folded.payload["pfad1_ausfall"] == "modell_timeout", "not superseded: words may miss"
    assert "pfad1_nachlauf" not in folded.payload, "the published salience is folded in"
    assert folded.payload["salienz_human"] == 0.7
    assert folded.payload["user_intentionen"] == ["information_teilen"]
    assert sorted(dropped) == ["t1", "t2", "t3"]


def test_salience_that_can_no_longer_come_is_given_up_not_waited_for() -> None:
    raw = message("t1", ["m1"], "Hallo?", NOW - HUMAN_TAIL_TTL - 1)
    [queued], dropped = take_up_plan([raw], {"t1": None}, NOW)
    payload = json.loads(queued)["payload"]
    assert "pfad1_nachlauf" not in payload
    assert payload["salienz_human"] is None and payload["user_intentionen"] == []
    assert dropped == []


def test_without_a_message_everything_goes_back_unchanged() -> None:
    impulse = impulse_event(
        "anna", "nova", "Ein Gedanke.", thought_arousal=None, trigger_turn_id=None
    )
    assert take_up_plan([impulse.wire()], {}, NOW) == ([impulse.wire()], [])
    assert take_up_plan([], {}, NOW) == ([], [])
