"""The `[AUFGABE]` block the responder gets after agents ran (docs/behaviour/agents.md#task-block).

Pure Python. One result gives exactly one instruction, by priority question > refusal >
fault > declined > done > legacy result. Several results (several tasks in one message)
give one numbered line per result, in the order they ran, each with its outcome, and the
instructions for the outcomes that occur: every task is confirmed, failed or asked about —
none is left out because another one asked back. Everything except questions alone cuts
the memory/web context (`task_context_cut`), because a report of what was done must not be
diluted by recollections.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from novaberg.agents.base import AgentResult

__all__ = ["QUESTION_HELD", "build_task_block", "outcome_lines", "question_text"]

HEADER = "[AUFGABE]"

QUESTION_HELD = "question_held"
"""`AgentResult.meta` flag: the agent asked back after another agent of the same run had
already asked; only one question is open at a time (`pending_agent:{user}`), so this one was
not stored (agents/dispatch_common.py)."""


def _parse_json(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _candidate_line(index: int, cand: dict[str, Any]) -> str:
    label = cand.get("name") or cand.get("title") or cand.get("anweisung") or "?"
    extras = [
        str(cand[k])
        for k in ("zusammenfassung", "datum", "typ", "erstellt")
        if cand.get(k) not in (None, "")
    ]
    return f"{index}. {label}" + (f" — {', '.join(extras)}" if extras else "")


def question_text(rueckfrage: str) -> str:
    """A human question from a stored `rueckfrage` (plain text or question JSON)."""
    data = _parse_json(rueckfrage)
    if data is None:
        return rueckfrage
    if data.get("typ") == "disambiguierung":
        lines = [_candidate_line(i, c) for i, c in enumerate(data.get("kandidaten") or [], 1)]
        head = data.get("frage") or "Welchen Eintrag meinst du?"
        return head + "\n" + "\n".join(lines)
    return str(data.get("frage") or rueckfrage)


def _question_block(rueckfrage: str) -> str:
    data = _parse_json(rueckfrage)
    if data is not None and data.get("typ") == "disambiguierung":
        return (
            f"{HEADER}\nEs gibt mehrere passende Einträge. Frage den Nutzer, welchen er meint, "
            "und nenne jeden mit Name, Inhalt bzw. Datum. Stelle nur diese Auswahlfrage, "
            f"nichts anderes:\n{question_text(rueckfrage)}"
        )
    text = question_text(rueckfrage) if data is not None and data.get("frage") else rueckfrage
    return f"{HEADER}\nStelle dem Nutzer genau diese Frage, nichts anderes:\n{text}"


def _held(result: AgentResult) -> bool:
    return result.status == "rueckfrage" and bool(result.meta.get(QUESTION_HELD))


def _outcome_line(index: int, result: AgentResult) -> str:
    if result.status == "abgeschlossen":
        outcome = f"erledigt: {result.result}"
    elif result.status == "fehler":
        outcome = f"fehlgeschlagen: {result.error}"
    elif result.status == "abgelehnt" and result.correction is not None:
        outcome = (
            f"nicht ausgeführt, nichts gespeichert: {result.correction.finding} "
            f"Stattdessen möglich: {result.correction.suggestion}"
        )
    elif result.status == "dismissed":
        outcome = "vom Nutzer abgelehnt, nichts geändert"
    elif _held(result):
        outcome = "noch nicht erledigt: dazu braucht es eine eigene Rückfrage, nach der anderen"
    elif result.status == "rueckfrage":
        outcome = "Rückfrage: " + question_text(result.question or "").replace("\n", "\n   ")
    else:
        outcome = f"Status {result.status}"
    return f"{index}. {result.agent_name} — {outcome}"


def outcome_lines(agent_results: Iterable[AgentResult | dict[str, Any]] | None) -> str:
    """Every result of the run as a numbered `n. agent — outcome` line, in run order; ""
    without results. The composer reads them when it runs after agents (only questions:
    every other outcome cuts its context and it is skipped)."""
    results = [AgentResult.coerce(r) for r in agent_results or []]
    return "\n".join(_outcome_line(i, r) for i, r in enumerate(results, 1))


def _several_block(results: list[AgentResult]) -> tuple[str, bool]:
    """One line per result and the instructions for the outcomes that occur."""
    statuses = {r.status for r in results}
    rules = []
    if "abgeschlossen" in statuses:
        rules.append("Berichte in der Ich-Form, was du getan hast.")
    if statuses & {"fehler", "abgelehnt"} or any(_held(r) for r in results):
        rules.append(
            "Sag ehrlich, was nicht geklappt hat oder nicht ausgeführt wurde, und behaupte "
            "nicht, es sei erledigt."
        )
    if any(_held(r) for r in results):
        rules.append(
            "Bitte den Nutzer, den offenen Auftrag nach seiner Antwort noch einmal zu sagen."
        )
    if any(r.status == "rueckfrage" and not _held(r) for r in results):
        rules.append(
            "Stelle am Ende genau diese Rückfrage, keine andere Frage; bei einer Auswahl "
            "nenne jede Möglichkeit."
        )
    block = (
        f"{HEADER}\nIn dieser Nachricht waren mehrere Aufträge. Geh auf jeden ein, in dieser "
        "Reihenfolge, und erfinde nichts dazu:\n" + outcome_lines(results) + "\n" + " ".join(rules)
    )
    return block, statuses != {"rueckfrage"}


def build_task_block(
    agent_results: Iterable[AgentResult | dict[str, Any]] | None, management_result: str = ""
) -> tuple[str, bool]:
    """`(task_block, task_context_cut)` for the responder; ("", False) when nothing ran."""
    results = [AgentResult.coerce(r) for r in (agent_results or [])]
    if len(results) > 1:
        return _several_block(results)
    by_status: dict[str, list[AgentResult]] = {}
    for result in results:
        by_status.setdefault(result.status, []).append(result)

    if "rueckfrage" in by_status:
        return _question_block(by_status["rueckfrage"][0].question or ""), False
    if "abgelehnt" in by_status:
        lines = [
            f"- {r.agent_name}: {r.correction.finding} Stattdessen möglich: {r.correction.suggestion}"
            for r in by_status["abgelehnt"]
            if r.correction is not None
        ]
        return (
            f"{HEADER}\nEs wurde nichts gespeichert oder geändert; sag das ehrlich, "
            "ohne etwas zu erfinden:\n" + "\n".join(lines),
            True,
        )
    if "fehler" in by_status:
        lines = [f"- Agent '{r.agent_name}': {r.error}" for r in by_status["fehler"]]
        return (
            f"{HEADER}\nDie Aufgabe ist fehlgeschlagen. Sag dem Nutzer ehrlich, dass es "
            "nicht geklappt hat, und behaupte nicht, es sei erledigt:\n" + "\n".join(lines),
            True,
        )
    if "dismissed" in by_status:
        return (
            f"{HEADER}\nDer Nutzer hat abgelehnt. Bestätige kurz, dass nichts geändert wurde.",
            True,
        )
    if "abgeschlossen" in by_status:
        lines = [f"- {r.agent_name}: {r.result}" for r in by_status["abgeschlossen"]]
        return (
            f"{HEADER}\nErledigt. Berichte in der Ich-Form, was du getan hast:\n"
            + "\n".join(lines),
            True,
        )
    if management_result:
        return f"{HEADER}\n- {management_result}", True
    return "", False
