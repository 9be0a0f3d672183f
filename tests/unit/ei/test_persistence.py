"""nova_state write and reload with pause decay (spec emotion §9, §14.9)."""

import logging
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novaberg.ei.persistence import (
    NOVA_STATE_FIELDS,
    nova_state_fields,
    pause_decay_factor,
    reload_nova_state,
    resolve_user_time,
)
from novaberg.ei.register import RegisterTarget

NOW = 1_800_000_000.0
HOUR = 3600.0

NOVA = {
    "emotion": "wut",
    "arousal": 0.9,
    "emotions_vector": "spirale",
    "mode": "beratend",
    "language_style": "formell",
    "relationship_dynamic": "vertrauen",
    "tone": "direkt",
    "intent": "personal",
    "prompt_topic": "der umzug",
    "emotions_vector_quelle": "gemessen",
}


def stored(**overrides: str) -> dict[str, str]:
    fields = nova_state_fields(NOVA, (0.7, 0.8), NOW - 10, nutzer_zeit=NOW - 10)
    fields.update(overrides)
    return fields


def test_twelve_fields_without_user_time() -> None:
    fields = nova_state_fields(NOVA, {"tiefe": 0.7, "naehe": 0.8}, NOW)
    assert set(fields) == set(NOVA_STATE_FIELDS)
    assert len(fields) == 12
    assert "nutzer_zeit" not in fields
    assert "emotions_vector_quelle" not in fields
    assert all(isinstance(value, str) for value in fields.values())
    assert fields["arousal"] == "0.9"
    assert fields["raum_tiefe"] == "0.7"
    assert fields["emotion"] == "wut"
    assert fields["prompt_topic"] == "der umzug"
    assert float(fields["turn_zeit"]) == NOW


def test_user_turn_adds_user_time() -> None:
    fields = nova_state_fields(NOVA, RegisterTarget(0.3, 0.5), NOW, nutzer_zeit=NOW - 5)
    assert len(fields) == 13
    assert float(fields["nutzer_zeit"]) == NOW - 5


def test_fields_accept_datetimes_and_raum_objects() -> None:
    class RegisterSpace:
        depth = 0.4
        closeness = 0.6

    moment = datetime.fromtimestamp(NOW, tz=UTC)
    fields = nova_state_fields({}, RegisterSpace(), moment)
    assert float(fields["turn_zeit"]) == NOW
    assert fields["raum_naehe"] == "0.6"
    assert fields["emotion"] == "neutral"
    assert fields["mode"] == "alltag"


def test_resolve_user_time(caplog: pytest.LogCaptureFixture) -> None:
    assert resolve_user_time(NOW - 3, NOW) == NOW - 3
    assert (
        resolve_user_time("2027-01-15T12:00:00+00:00", NOW)
        == datetime(2027, 1, 15, 12, tzinfo=UTC).timestamp()
    )
    with caplog.at_level(logging.WARNING):
        assert resolve_user_time("kaputt", NOW) == NOW
        assert resolve_user_time(None, NOW) == NOW
    assert len(caplog.records) == 2


@pytest.mark.parametrize(
    ("pause", "factor"),
    [
        (-5, 1.0),
        (0, 1.0),
        (1800, 0.95),
        (3600, 0.90),
        (5400, 0.675),
        (7200, 0.45),
        (9000, 0.225),
        (10800, 0.0),
        (50000, 0.0),
    ],
)
def test_pause_decay_factor(pause: float, factor: float) -> None:
    assert pause_decay_factor(pause) == pytest.approx(factor)


@given(st.floats(0, 20000), st.floats(0, 20000))
def test_pause_decay_is_monotone(a: float, b: float) -> None:
    short, long = sorted((a, b))
    assert 0.0 <= pause_decay_factor(long) <= pause_decay_factor(short) <= 1.0


def test_no_hash_gives_fresh_emotion_and_default_raum() -> None:
    result = reload_nova_state({}, NOW, is_user_turn=True)
    assert result.emotion["emotion"] == "neutral"
    assert result.emotion["arousal"] == 0.5
    assert result.emotion["mode"] == "alltag"
    assert (result.depth, result.closeness) == (0.3, 0.5)
    assert result.reset is False


def test_roundtrip_without_user_turn_keeps_everything() -> None:
    result = reload_nova_state(stored(), NOW + 10 * HOUR, is_user_turn=False)
    expected = dict(NOVA, emotions_vector_quelle="")
    assert result.emotion == expected
    assert (result.depth, result.closeness) == (0.7, 0.8)
    assert result.decay_factor is None


def test_bad_arousal_reads_as_half() -> None:
    assert reload_nova_state(stored(arousal="viel"), NOW, False).emotion["arousal"] == 0.5


def test_missing_raum_is_the_target_of_the_loaded_labels() -> None:
    data = stored()
    del data["raum_tiefe"], data["raum_naehe"]
    result = reload_nova_state(data, NOW, False)
    # beratend → 0.6; (vertrauen 1.0 + formell 0.2) / 2 = 0.6
    assert (result.depth, result.closeness) == (0.6, 0.6)


def test_one_hour_pause_fades_arousal_without_reset() -> None:
    result = reload_nova_state(stored(nutzer_zeit=str(NOW - HOUR)), NOW, True)
    assert result.emotion["arousal"] == pytest.approx(0.86)  # 0.5 + 0.4 × 0.9
    assert result.emotion["emotion"] == "wut"
    assert result.reset is False
    assert result.pause_seconds == HOUR


def test_three_hour_pause_resets_categories_and_keeps_raum() -> None:
    result = reload_nova_state(stored(nutzer_zeit=str(NOW - 3 * HOUR)), NOW, True)
    assert result.emotion["arousal"] == 0.5
    assert result.reset is True
    assert result.emotion["emotion"] == "neutral"
    assert result.emotion["mode"] == "alltag"
    assert result.emotion["language_style"] == "neutral"
    assert result.emotion["tone"] == "sachlich"
    assert result.emotion["emotions_vector"] == ""
    assert result.emotion["relationship_dynamic"] == "vertrauen"
    assert (result.depth, result.closeness) == (0.7, 0.8)


def test_reset_starts_just_below_factor_045() -> None:
    at_two_hours = reload_nova_state(stored(nutzer_zeit=str(NOW - 2 * HOUR)), NOW, True)
    assert at_two_hours.reset is False
    later = reload_nova_state(stored(nutzer_zeit=str(NOW - 2 * HOUR - 1)), NOW, True)
    assert later.reset is True


def test_pause_applies_only_on_user_turns() -> None:
    result = reload_nova_state(stored(nutzer_zeit=str(NOW - 5 * HOUR)), NOW, False)
    assert result.emotion["arousal"] == 0.9
    assert result.emotion["emotion"] == "wut"


def test_user_time_argument_overrides_stored_field() -> None:
    result = reload_nova_state(stored(nutzer_zeit=str(NOW)), NOW, True, nutzer_zeit=NOW - HOUR)
    assert result.decay_factor == pytest.approx(0.9)


def test_self_impulse_raises_arousal_to_its_level() -> None:
    data = stored(arousal="0.3")
    assert reload_nova_state(data, NOW, False, own_thought_arousal=0.8).emotion["arousal"] == 0.8
    assert reload_nova_state(data, NOW, False, own_thought_arousal=0.2).emotion["arousal"] == 0.3


def test_bytes_from_redis_are_decoded() -> None:
    raw = {key.encode(): value.encode() for key, value in stored().items()}
    result = reload_nova_state(raw, NOW, False)
    assert result.emotion["emotion"] == "wut"
    assert result.depth == 0.7
