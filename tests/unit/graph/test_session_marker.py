"""`[ERLEDIGT]` / `[FEHLGESCHLAGEN]` reach the history the next turn reads."""

from __future__ import annotations

from novaberg.agents.base import AgentResult
from novaberg.graph.nodes.dispatcher import build_session_turn
from novaberg.graph.personality import InternalPersonality
from novaberg.memory.session_view import numbered_view


def _assistant_turn(status: str, **extra: str) -> dict:
    result = AgentResult(agent_name="notizen", result="ok", status=status, **extra)
    state = {
        "graph_role": "character",
        "user_prompt": "Setz Milch auf die Liste",
        "event_payload": {},
        "response": "Milch steht drauf.",
        "internal": InternalPersonality(),
        "agent_results": [result],
    }
    turn = build_session_turn(state, now=1.0)  # type: ignore[arg-type]
    assert turn is not None
    return turn


def test_done_agent_marks_the_user_line() -> None:
    answer = _assistant_turn("abgeschlossen")
    assert answer["marker"] == "[ERLEDIGT]"
    view = numbered_view([{"rolle": "user", "inhalt": "Setz Milch auf die Liste"}, answer])
    assert view.splitlines()[0].startswith("[1] USER (neutral) [ERLEDIGT]:")


def test_failed_agent_marks_failure_and_question_stays_unmarked() -> None:
    failed = _assistant_turn("fehler", error="DB weg")
    assert failed["marker"] == "[FEHLGESCHLAGEN]"
    question = _assistant_turn("rueckfrage", question="Welche Liste?")
    assert "marker" not in question
    view = numbered_view([{"rolle": "user", "inhalt": "x"}, question])
    assert "[ERLEDIGT]" not in view and "[FEHLGESCHLAGEN]" not in view
