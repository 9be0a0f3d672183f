"""Personality data classes (spec emotion §1)."""

import copy
import json

from novaberg.graph.personality import (
    Character,
    Emotion,
    InternalPersonality,
    Personality,
    RegisterSpace,
)


def test_emotion_defaults() -> None:
    emotion = Emotion()
    assert (emotion.emotion, emotion.arousal, emotion.emotions_vector) == ("neutral", 0.5, "")
    assert (emotion.mode, emotion.language_style, emotion.relationship_dynamic) == (
        "alltag",
        "neutral",
        "neutral",
    )
    assert (emotion.tone, emotion.intent, emotion.prompt_topic) == ("sachlich", "smalltalk", "")
    assert emotion.emotions_vector_quelle == ""


def test_emotion_to_dict_has_the_ten_fields() -> None:
    data = Emotion(emotion="wut", arousal=0.8, emotions_vector="spirale").to_dict()
    assert list(data) == [
        "emotion",
        "arousal",
        "emotions_vector",
        "mode",
        "language_style",
        "relationship_dynamic",
        "tone",
        "intent",
        "prompt_topic",
        "emotions_vector_quelle",
    ]
    assert data["emotion"] == "wut"
    assert data["emotions_vector"] == "spirale"


def test_emotion_from_dict_is_tolerant() -> None:
    assert Emotion.from_dict(None) == Emotion()
    loaded = Emotion.from_dict({"emotion": "freude", "arousal": "hoch", "mode": None, "x": 1})
    assert loaded == Emotion(emotion="freude", arousal=0.5)
    assert Emotion.from_dict({"arousal": 3}).arousal == 1.0


def test_raum_and_character_defaults() -> None:
    assert (RegisterSpace().depth, RegisterSpace().closeness) == (0.3, 0.5)
    assert Character().to_dict() == dict.fromkeys(
        ("core", "adaptive", "relationship", "intentions", "emotions"), ""
    )


def test_personality_json_roundtrip() -> None:
    person = Personality(Character(core="ruhig"), Emotion(emotion="hoffnung", arousal=0.7))
    assert Personality.from_dict(json.loads(json.dumps(person.to_dict()))) == person


def test_internal_personality_json_roundtrip_and_defaults() -> None:
    nova = InternalPersonality()
    assert isinstance(nova, Personality)
    assert (nova.identities, nova.directives, nova.register) == ([], [], RegisterSpace())
    nova.identities.append("Du bist Nova.")
    nova.directives.append({"anweisung": "duze mich", "kontext": "immer"})
    nova.register = RegisterSpace(0.7, 0.9)
    data = json.loads(json.dumps(nova.to_dict()))
    assert data["raum"] == {"tiefe": 0.7, "naehe": 0.9}
    assert InternalPersonality.from_dict(data) == nova


def test_copies_are_independent() -> None:
    nova = InternalPersonality(directives=[{"anweisung": "a", "kontext": ""}])
    clone = nova.copy()
    clone.directives[0]["anweisung"] = "b"
    clone.emotion.arousal = 0.9
    assert nova.directives[0]["anweisung"] == "a"
    assert nova.emotion.arousal == 0.5
    deep = copy.deepcopy(nova)
    assert deep == nova and deep is not nova
    emotion = Emotion(emotion="wut")
    assert emotion.copy() == emotion and emotion.copy() is not emotion


def test_fresh_defaults_are_not_shared() -> None:
    a, b = InternalPersonality(), InternalPersonality()
    a.identities.append("x")
    a.emotion.emotion = "wut"
    assert b.identities == [] and b.emotion.emotion == "neutral"
