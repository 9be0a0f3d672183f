"""Corrector node: rewrites a criticised answer from the tribunal's feedback
(docs/behaviour/nodes.md#corrector).

The tribunal normalises, it does not censor: a rejected answer is handed here with the
critical feedback (`tribunal_summary`) and rewritten (temperature 0.5),
then judged again. The node always increments `correction_round`, also when the rewrite
fails — otherwise a failing model would loop the graph forever. A failed (timed-out) or
empty rewrite keeps the previous answer and is logged; the tribunal then judges it again.
A model that cannot be used at all (`ModelUnavailable`) fails the turn.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import stimulus_text
from novaberg.config import Role
from novaberg.graph.nodes.context_text import directives_text
from novaberg.graph.state import ConversationState
from novaberg.llm.errors import ModelError, ModelUnavailable
from novaberg.prompts import render, user_message

log = logging.getLogger(__name__)

CORRECTOR_TEMPERATURE: Final = 0.5
"""Some freedom to rephrase; the criticism fixes the direction."""


async def corrector(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Rewrite `response` from `tribunal_summary`; increment `correction_round`."""
    rounds = int(state.get("correction_round") or 0) + 1
    previous = state.get("response") or ""
    prompt = render(
        "corrector",
        reiz=stimulus_text(state),
        antwort=previous,
        kritik=state.get("tribunal_summary") or "",
        direktiven=directives_text(state),
        erinnerung=state.get("memory_context") or "",
    )
    try:
        text = (
            await deps.model.chat(
                Role.CHAT, user_message(prompt), temperature=CORRECTOR_TEMPERATURE
            )
        ).strip()
    except ModelUnavailable:
        raise  # the model cannot be used: the turn fails (events.outcomes)
    except ModelError as exc:
        log.warning("corrector: rewrite failed (%s); previous answer kept", exc)
        return {
            "correction_round": rounds,
            "_log": {"runde": rounds, "ausfall": f"{type(exc).__name__}"},
        }
    if not text:
        log.warning("corrector: empty rewrite; previous answer kept")
        return {"correction_round": rounds, "_log": {"runde": rounds, "ausfall": "leer"}}
    return {
        "response": text,
        "correction_round": rounds,
        "_log": {"runde": rounds, "laenge": len(text)},
    }
