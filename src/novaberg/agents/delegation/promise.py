"""What a promise asks of the research and delegation agents: the matter, the turn it came
from and why the agent runs (docs/behaviour/agents.md#delegation). Shared by both dispatches.

On a self-event with a `commitment` the matter is what the person said in the turn whose
answer made the promise (`ausloeser_turn_id`, found in the session the run read); the case
is then Nova's promise (`zusage`). Otherwise the person asked in this very turn: the matter
is their words, the case their request (`auftrag`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from novaberg.agents.delegation.repository import CAUSE_PROMISE, CAUSE_REQUEST
from novaberg.agents.stimulus import stimulus_text
from novaberg.wire import FIELD_COMMITMENT, FIELD_TRIGGER_TURN_ID, ROLE_USER

TOPIC_CHARS: Final = 60


def _said_in(turns: list[Mapping[str, Any]], turn_id: str) -> Mapping[str, Any] | None:
    for turn in reversed(turns):
        if turn.get("turn_id") == turn_id and turn.get("rolle") == ROLE_USER:
            return turn
    return None


def _topic(turn: Mapping[str, Any] | None, matter: str) -> str:
    themes = (turn or {}).get("themen") or []
    if themes and str(themes[0]).strip():
        return str(themes[0]).strip()[:TOPIC_CHARS]
    return " ".join(matter.split())[:TOPIC_CHARS] or "anliegen"


def promise_parameters(state: Mapping[str, Any]) -> dict[str, Any]:
    """The agent parameters `anliegen`, `thema`, `anlass`, `bezug_turn_id` of this run."""
    payload = state.get("event_payload") or {}
    trigger = payload.get(FIELD_TRIGGER_TURN_ID)
    if payload.get(FIELD_COMMITMENT) and isinstance(trigger, str) and trigger:
        turns = list(state.get("session_turns") or state.get("raw_turns") or [])
        said = _said_in(turns, trigger)
        matter = str((said or {}).get("inhalt") or "").strip() or stimulus_text(state)
        return {
            "anliegen": matter,
            "thema": _topic(said, matter),
            "anlass": CAUSE_PROMISE,
            "bezug_turn_id": trigger,
        }
    matter = stimulus_text(state)
    return {
        "anliegen": matter,
        "thema": _topic(None, matter),
        "anlass": CAUSE_REQUEST,
        "bezug_turn_id": str(state.get("turn_id") or ""),
    }
