"""Shared scripted rules and fixtures for the graph integration tests."""

from __future__ import annotations

from typing import Any

from novaberg.config import Profile, Settings
from novaberg.llm.scripted import ScriptedLLM

PERCEPTION_OK: dict[str, Any] = {
    "rational": {"intent": "personal", "tone": "empathisch", "thema": "Umzug nach Köln"},
    "emotional": {"emotion": "freude", "arousal": 0.7},
    "psychologisch": {
        "modus": "alltag",
        "sprach_stil": "locker",
        "beziehungs_dynamik": "vertrauen",
    },
}

SCORE_OK: dict[str, Any] = {
    "themen": ["umzug", "köln"],
    "emotionen": {"explizit": ["freude"], "implizit": [], "valenz": "positiv"},
    "salienz": 0.8,
    "gedaechtnistyp": "lang",
    "dimension": "kontext",
    "begruendung": "Persönliche Neuigkeit.",
    "intentionen": ["information_teilen", "emotionaler_ausdruck"],
    "entitaeten_roh": ["Köln"],
    "zeitausdruck_roh": "",
}


def script_human(scripted: ScriptedLLM, *, score: Any = None, perception: Any = None) -> None:
    """Rules for one HumanGraph run: perception and salience score answers."""
    scripted.add(
        ".*", perception if perception is not None else PERCEPTION_OK, schema="PerceptionResult"
    )
    scripted.add(".*", score if score is not None else SCORE_OK, schema="SalienceScore")


Step = str | frozenset[str]


HUMAN_STEPS: list[Any] = [
    frozenset({"perception", "situation_reader"}),
    "enricher",
    "ei_calc",
    "session_turn",
    "salience",
    "dispatcher",
]
"""The HumanGraph step by step: perception and the situation's reading at once."""


def in_steps(nodes: list[str], template: list[Step]) -> list[Step | None]:
    """`nodes` (in the order they finished) regrouped like `template`: a set in the
    template stands for nodes that run concurrently in one LangGraph step (their finishing
    order varies) and takes as many nodes as it has. Compare the result with the template."""
    grouped: list[Step | None] = []
    index = 0
    for item in template:
        if isinstance(item, str):
            grouped.append(nodes[index] if index < len(nodes) else None)
            index += 1
        else:
            grouped.append(frozenset(nodes[index : index + len(item)]))
            index += len(item)
    grouped.extend(nodes[index:])
    return grouped


def anchor_groups(final: dict[str, Any]) -> dict[str, list[str]]:
    """The memory anchor's groups as the memory context holds them: name → lines."""
    groups: dict[str, list[str]] = {}
    for entry in final.get("memory_entries") or []:
        if entry.get("subtyp") == "anker":
            name = entry["quelle"].removeprefix("Fakten zu ")
            groups.setdefault(name, []).append(entry["inhalt"])
    return groups


def judge_schemas(profile: Profile) -> set[str]:
    """The tribunal's structured calls: three judges (full profile) or one panel that
    returns the three verdicts (compact, docs/behaviour/llm.md#profiles)."""
    if profile is Profile.COMPACT:
        return {"TribunalPanel"}
    return {"JuristVerdict", "PsychologistVerdict", "EthicistVerdict"}


def with_rewrite(settings: Settings) -> Settings:
    """The settings with the query rewrite on in either profile (the compact profile turns
    it off by default): for tests of the rewrite itself."""
    return settings.model_copy(update={"query_rewrite": True})
