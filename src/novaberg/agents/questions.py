"""Which agent question a run leaves waiting for the person, and of what kind.

The event kind `awaiting_user` (docs/behaviour/events.md#awaiting-user): when a task agent asks
back, the answer that carries the question says so, so a client can show it as a question —
with Ja/Nein buttons where a yes/no answer is expected. The agent's own question text is not
handed out (a choice question is a JSON structure the responder turns into words); the
marker names the agent and the kind of answer it waits for.

One function, `awaited_answer`, derives it from the run's agent results: the last result
asking a question is the one whose question `pending_agent:{user}` holds (each question
replaces the one before). The kind comes from the `frage_typ` the agent's question step
names (`agents/workflow.py:ask`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from novaberg.agents.base import AgentResult
from novaberg.agents.gate import CHOICE, GATE
from novaberg.wire import (
    KIND_AWAITING_USER,
    QUESTION_CHOICE,
    QUESTION_OPEN,
    QUESTION_YES_NO,
    QuestionKind,
)

QUESTION_STATUS: Final = "rueckfrage"

YES_NO: Final = frozenset({GATE, "nicht_gefunden"})
"""`frage_typ`s read with the closed consent rule: the rule agents' gate ("Soll ich das
ausführen?") and the notes agent's "Es gibt noch keine Notiz 'X'. Soll ich sie anlegen?"
(agents/notes/search.py)."""

CHOICE_KINDS: Final = frozenset({CHOICE, "disambiguierung"})
"""`frage_typ`s that ask which of several candidates: the rule agents' choice and the notes
and timeline agents' disambiguation (agents/notes/search.py, agents/timeline/search.py)."""


@dataclass(frozen=True, slots=True)
class AwaitedAnswer:
    """The question a run leaves open: which agent asked, what kind of answer it reads."""

    agent: str
    kind: QuestionKind

    def wire(self) -> dict[str, Any]:
        """The `erwartet_antwort` object of a `character_response`."""
        return {"typ": KIND_AWAITING_USER, "agent": self.agent, "art": self.kind}


def question_kind(question_type: Any) -> QuestionKind:
    """The kind of answer a question of this `frage_typ` reads; unknown ones are open."""
    if question_type in YES_NO:
        return QUESTION_YES_NO
    if question_type in CHOICE_KINDS:
        return QUESTION_CHOICE
    return QUESTION_OPEN


def awaited_answer(
    agent_results: Iterable[AgentResult | dict[str, Any]] | None,
) -> AwaitedAnswer | None:
    """The question the run leaves waiting (the last agent result asking one), or None."""
    asking = [
        result
        for result in (AgentResult.coerce(r) for r in agent_results or [])
        if result.status == QUESTION_STATUS
    ]
    if not asking:
        return None
    last = asking[-1]
    question_type = next(
        (
            step.get("frage_typ")
            for step in reversed(last.steps)
            if step.get("ergebnis") == QUESTION_STATUS
        ),
        None,
    )
    return AwaitedAnswer(agent=last.agent_name, kind=question_kind(question_type))
