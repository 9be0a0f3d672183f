"""The scripted model and settings for the impulse end-to-end tests: a greeting, then a sad
message (the user's mood breaks in: emotion vector `einbruch`), then silence."""

from __future__ import annotations

from typing import Any

APPROVE = {"score": 0.05, "direktiven_score": 0.05, "begruendung": ""}
SAD = "Mir geht es schlecht, mein Vater ist krank."
GREETING = "Hallo Nova, wie geht es dir heute?"
IMPULSE_ANSWER = "Ich muss an deinen Vater denken. Wie geht es dir inzwischen?"


def perception(emotion: str, topic: str) -> dict[str, Any]:
    return {
        "rational": {"intent": "personal", "tone": "ernst", "thema": topic},
        "emotional": {"emotion": emotion, "arousal": 0.7},
        "psychologisch": {
            "modus": "emotional",
            "sprach_stil": "locker",
            "beziehungs_dynamik": "vertrauen",
        },
    }


RULES: list[dict[str, Any]] = [
    # the user's words: the sad message is perceived as sadness about the father
    {
        "match": "schlecht",
        "schema": "PerceptionResult",
        "output": perception("traurigkeit", "Vater"),
    },
    {"match": ".*", "schema": "PerceptionResult", "output": perception("neutral", "Begrüßung")},
    # no asking intentions: only the mood breaking in (vector einbruch) sets a task
    {
        "match": ".*",
        "schema": "SalienceScore",
        "output": {
            "themen": ["familie"],
            "emotionen": {"explizit": [], "implizit": [], "valenz": "neutral"},
            "salienz": 0.5,
            "gedaechtnistyp": "kurz",
            "dimension": "kontext",
            "begruendung": "",
            "intentionen": ["information_teilen"],
            "entitaeten_roh": [],
            "zeitausdruck_roh": "",
        },
    },
    {
        "match": ".*",
        "schema": "RouterDecision",
        "output": {"needs_memory": True, "momentum": "mid", "management_action": ""},
    },
    {"match": ".*", "schema": "JuristVerdict", "output": APPROVE},
    {"match": ".*", "schema": "PsychologistVerdict", "output": APPROVE},
    {"match": ".*", "schema": "EthicistVerdict", "output": APPROVE},
    {
        "match": ".*",
        "schema": "ThinkerCheck",
        "output": {"ergebnis": "OK", "probleme": "", "korrigierte_antwort": ""},
    },
    # Nova's own thought is answered in its own words, the user's messages plainly
    {"match": "EIGENER GEDANKE", "output": IMPULSE_ANSWER},
    {"match": "Antworte kurz und natürlich", "output": "Das tut mir leid. Ich bin da."},
]

ENV: dict[str, str] = {
    "NOVABERG_LLM": "scripted",
    "NOVABERG_EMBED_DIM": "384",
    "NOVABERG_PIXIE": "true",
    "NOVABERG_FOLLOW_UPS": "false",
    "NOVABERG_IMPULSE_SILENCE": "2",
    "NOVABERG_QUIET_HOURS": "",
    "NOVABERG_PIXIE_CPU_INTERVAL": "1",
    "NOVABERG_PIXIE_LLM_INTERVAL": "1",
}
"""Shortened so the test need not wait: 2 s of silence, no quiet hours, 1 s heartbeats."""


def stance_fields(now: float) -> dict[str, str]:
    """The stance hash of a warm conversation in which Nova may lead."""
    return {"gerechnet": "1", "naehe": "0.6", "initiative": "1", "zeit": repr(now)}
