"""Composer and objection verdict: the head block parser, the prompt and what the responder
is told (pure parts; the graph run is in tests/integration/graph/test_content_nodes.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from novaberg.graph.nodes.composer import annotation, build_prompt, value_text
from novaberg.graph.nodes.responder import objection_text
from novaberg.graph.objection import (
    FAILURE_BAD_VALUE,
    FAILURE_EMPTY,
    FAILURE_MISSING_FIELD,
    FAILURE_NO_SEPARATOR,
    FAILURE_REASONS,
    failed,
    parse_composer_output,
)

ROME = """EINWAND: ja
GEPRUEFT: Laut Erinnerung war Person B nie in Rom.
BEWERTUNG: trifft_nicht_zu
STAERKE: 0,9
QUELLE: fakt
---
Person B war nie in Rom und sagt das. Sie fragt, wie Person A darauf kommt."""


def test_head_block_and_content_are_split() -> None:
    content, verdict = parse_composer_output(ROME)
    assert content == "Person B war nie in Rom und sagt das. Sie fragt, wie Person A darauf kommt."
    assert verdict.delivered and verdict.objection
    assert verdict.assessment == "trifft_nicht_zu" and verdict.strength == 0.9
    assert verdict.source == "fakt" and verdict.checked.startswith("Laut Erinnerung")
    assert verdict.contests and verdict.failure is None


def test_umlaut_and_bold_keys_are_read() -> None:
    text = "**EINWAND:** nein\nGEPRÜFT: nichts\nBEWERTUNG: trifft_zu\nSTÄRKE: 1\nQUELLE: haltung\n---\nx"
    content, verdict = parse_composer_output(text)
    assert content == "x" and verdict.delivered and not verdict.objection
    assert not verdict.contests


@pytest.mark.parametrize(
    ("text", "reason", "field", "content"),
    [
        ("", FAILURE_EMPTY, None, ""),
        ("   \n", FAILURE_EMPTY, None, ""),
        (
            "EINWAND: ja\nNur Prosa ohne Trenner.",
            FAILURE_NO_SEPARATOR,
            None,
            "Nur Prosa ohne Trenner.",
        ),
        ("EINWAND: ja\n---\nProsa", FAILURE_MISSING_FIELD, "GEPRUEFT", "Prosa"),
        (ROME.replace("STAERKE: 0,9", "STAERKE: sehr"), FAILURE_BAD_VALUE, "STAERKE", None),
        (ROME.replace("STAERKE: 0,9", "STAERKE: 1.5"), FAILURE_BAD_VALUE, "STAERKE", None),
        (ROME.replace("trifft_nicht_zu", "falsch"), FAILURE_BAD_VALUE, "BEWERTUNG", None),
        (ROME.replace("EINWAND: ja", "EINWAND: vielleicht"), FAILURE_BAD_VALUE, "EINWAND", None),
        (ROME.replace("QUELLE: fakt", "QUELLE: web"), FAILURE_BAD_VALUE, "QUELLE", None),
    ],
)
def test_unreadable_head_fails_with_a_reason_and_keeps_the_prose(
    text: str, reason: str, field: str | None, content: str | None
) -> None:
    prose, verdict = parse_composer_output(text)
    assert verdict.delivered is False and verdict.failure == reason
    assert verdict.failure_field == field
    assert not verdict.contests, "an unreadable verdict never contests a premise"
    if content is not None:
        assert prose == content
    else:
        assert prose.startswith("Person B war nie in Rom")


def test_failure_reasons_are_a_closed_set() -> None:
    assert failed(FAILURE_EMPTY).failure in FAILURE_REASONS
    with pytest.raises(ValueError):
        failed("irgendwas")


def test_responder_is_told_to_contradict_or_only_quote() -> None:
    _, verdict = parse_composer_output(ROME)
    text = objection_text(verdict.to_dict())
    assert "stimmt nicht" in text and "nie in Rom" in text
    deviating = {
        **verdict.to_dict(),
        "bewertung": "abweichend",
        "geprueft": "Er sagt 5, bekannt ist 3.",
    }
    text = objection_text(deviating)
    assert "nennen" in text and "nicht auf ihm auf" in text and "5" in text
    assert objection_text({**verdict.to_dict(), "bewertung": "trifft_zu"}) == ""
    assert objection_text({**verdict.to_dict(), "einwand": False}) == ""
    assert objection_text(failed(FAILURE_EMPTY).to_dict()) == ""
    assert objection_text(None) == ""


def test_annotation_only_for_a_contested_premise() -> None:
    _, verdict = parse_composer_output(ROME)
    assert annotation(verdict) is not None and "nie in Rom" in str(annotation(verdict))
    _, holds = parse_composer_output(ROME.replace("trifft_nicht_zu", "trifft_zu"))
    assert annotation(holds) is None


@dataclass
class _Stance:
    umfang: float
    fragen: float


def test_value_text_renders_any_channel_shape() -> None:
    assert value_text(None) == "" and value_text("  Lage  ") == "Lage"
    assert value_text({"gegenstand": "Urlaub", "leer": "", "objekte": ["Rom"]}) == (
        "gegenstand: Urlaub\nobjekte: - Rom"
    )
    assert value_text(_Stance(0.25, 0.5)) == "umfang: 0.25\nfragen: 0.50"
    assert value_text([{"titel": "Zahnarzt"}, ""]) == "- titel: Zahnarzt"


def test_prompt_leaves_out_the_stance_working_and_the_turn_id() -> None:
    """The stance's per-magnitude working and initiative reason and the situation's turn id
    are tokens the composer reads nothing from; the magnitudes and the cluster stay."""
    state = {
        "user_prompt": "Hallo",
        "stance": {
            "umfang": 0.15,
            "cluster": "schlachtfeld",
            "initiative": False,
            "initiative_grund": "cluster schlachtfeld, versatz +0.00",
            "details": {"umfang": {"grundwert": 0.15, "ergebnis": 0.15}},
        },
        "situation": {"gegenstand": "Urlaub", "turn_id": "c86f4a784c654e50"},
    }
    prompt = build_prompt(state, "")  # type: ignore[arg-type]
    assert "[HALTUNG]\numfang: 0.15\ncluster: schlachtfeld\ninitiative: False\n" in prompt
    assert "[SACHLAGE]\ngegenstand: Urlaub\n" in prompt
    for unread in ("details", "grundwert", "initiative_grund", "versatz", "turn_id", "c86f4a"):
        assert unread not in prompt


def test_prompt_carries_memory_context_and_not_the_hypothesis() -> None:
    state = {
        "user_prompt": "wie war dein Urlaub in Rom?",
        "memory_context_composer": "- (kzg) Person B war nie in Rom.",
        "appointment_reading": {"termine": ["Zahnarzt morgen 9 Uhr"]},
        "stance": {"umfang": 0.3},
        "situation": {"gegenstand": "Urlaub"},
        "conversation_hypothesis": "GEHEIME HYPOTHESE",
        "session_turns": [
            {"rolle": "user", "inhalt": "Hallo"},
            {"rolle": "assistant", "inhalt": "Hi!"},
            {"rolle": "user", "inhalt": "wie war dein Urlaub in Rom?"},
        ],
    }
    prompt = build_prompt(state, "- Rom (https://example.org): Hauptstadt")  # type: ignore[arg-type]
    assert "[ERINNERUNG]\n- (kzg) Person B war nie in Rom." in prompt
    assert "[TERMINE]" in prompt and "Zahnarzt morgen 9 Uhr" in prompt
    assert "[HALTUNG]\numfang: 0.30" in prompt and "[SACHLAGE]" in prompt
    assert "[SUCHKONTEXT]" in prompt and "example.org" in prompt
    assert "[VERLAUF]" not in prompt and "Hallo" not in prompt, "the history is in the turn head"
    assert prompt.rstrip().endswith("[ANLASS]\nwie war dein Urlaub in Rom?")
    assert "GEHEIME HYPOTHESE" not in prompt, "must not wait for the conversation vector"
    bare = build_prompt({"user_prompt": "Hallo"}, "")  # type: ignore[arg-type]
    for block in ("[ERINNERUNG]", "[TERMINE]", "[SACHLAGE]", "[HALTUNG]", "[SUCHKONTEXT]"):
        assert block not in bare


def test_agent_outcomes_reach_the_composer_and_a_plain_message_gets_no_block() -> None:
    from novaberg.agents.base import AgentResult

    plain = build_prompt({"user_prompt": "Wie geht's?"}, "")  # type: ignore[typeddict-item]
    assert "[AUFTRAEGE]" not in plain
    asked = AgentResult("notizen", None, "rueckfrage", question="Welche Liste meinst du?")
    prompt = build_prompt(
        {"user_prompt": "Setz Brot auf die Liste", "agent_results": [asked]},  # type: ignore[typeddict-item]
        "",
    )
    assert "[AUFTRAEGE]" in prompt
    assert "1. notizen — Rückfrage: Welche Liste meinst du?" in prompt
