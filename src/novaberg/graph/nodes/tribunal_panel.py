"""Tribunal in one call — the compact profile's tribunal (docs/behaviour/llm.md#profiles).

The full profile asks the jurist, the psychologist and the ethicist in three calls. On the
bundled model the three run one after another (one model, two cores), and each re-reads
the same situation, memory and answer. Here one call reads that material once and returns
the three verdicts side by side; each verdict is then read exactly like a judge's own
answer (`tribunal.make_vote`, the same thresholds, votes and aggregation). What stays the
same is what docs/behaviour/nodes.md#tribunal asks of the tribunal: three perspectives,
three scores, Python turns them into votes and two votes decide.

**A verdict that is unreadable fails only its judge**: the panel's schema advertises each
judge's form to constrained decoding, but the call accepts any JSON object and every
verdict is validated on its own — a psychologist's broken part does not throw away the
jurist's readable one (the same outcome as one failed call among three). A failed or
unreadable call as a whole fails all three judges (each counts as `warnung`, so the
answer goes to the corrector — a missing judgement is not approval).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, ValidationError, WithJsonSchema

from novaberg.agents.deps import GraphDeps
from novaberg.config import Role
from novaberg.graph.nodes.context_text import directives_text, situation_text
from novaberg.graph.nodes.reducer import contexts_beside_head
from novaberg.graph.nodes.tribunal import (
    _SCHEMAS,
    ETHICIST,
    JURIST,
    PSYCHOLOGIST,
    ROLES,
    TRIBUNAL_TEMPERATURE,
    TribunalThresholds,
    _failure_reason,
    failed_vote,
    make_vote,
    verdict_update,
)
from novaberg.graph.state import ConversationState, TribunalVote
from novaberg.graph.turn_head import head_of, with_head
from novaberg.llm.errors import ModelError, ModelUnavailable
from novaberg.prompts import render

log = logging.getLogger(__name__)

UNREADABLE_PART: Final = "unlesbar"
"""A judge whose part of the panel's answer is missing or does not fit its form."""


PANEL_REASON_MAX_CHARS: Final = 120
"""Each judge's reasoning as the panel advertises it (the judges' own form allows 400): on
the bundled model every generated token costs the wait for the answer (~15 tokens/s on two
cores), and the reasoning is read only by the corrector, where a clause says enough."""


def _part(role: str) -> Any:
    """A judge's field: advertised with the judge's own schema (its reasoning shorter),
    read as any JSON value."""
    schema = _SCHEMAS[role].model_json_schema()
    schema["properties"]["begruendung"]["maxLength"] = PANEL_REASON_MAX_CHARS
    return Annotated[Any, WithJsonSchema(schema)]


class TribunalPanel(BaseModel):
    """The panel's answer `{jurist, psychologe, ethiker}`, one verdict each (validated
    per judge by `panel_votes`, not here)."""

    model_config = ConfigDict(extra="ignore", json_schema_extra={"required": list(ROLES)})

    jurist: _part(JURIST) = None  # type: ignore[valid-type]
    psychologe: _part(PSYCHOLOGIST) = None  # type: ignore[valid-type]
    ethiker: _part(ETHICIST) = None  # type: ignore[valid-type]


def panel_prompt(state: ConversationState) -> str:
    """The panel's prompt after the turn's head (which holds the conversation and the
    utterance): the judges' shared material once, then the three tasks."""
    return render(
        "tribunal_panel",
        lagebild=situation_text(state),
        erinnerung=contexts_beside_head(state)[0],
        anmerkungen="\n".join(state.get("node_annotations") or []),
        antwort=state.get("response") or "",
        direktiven=directives_text(state),
    )


def panel_votes(
    panel: TribunalPanel, thresholds: TribunalThresholds, turn: str | None = None
) -> list[TribunalVote]:
    """Each judge's vote from its part; a part that does not fit fails that judge only."""
    votes = []
    for role in ROLES:
        raw = getattr(panel, role)
        try:
            verdict = _SCHEMAS[role].model_validate(raw)
        except ValidationError as exc:
            log.warning(
                "tribunal panel: %s gave no readable verdict (%s) turn=%s",
                role,
                str(exc).splitlines()[0],
                turn,
            )
            votes.append(failed_vote(role, UNREADABLE_PART))
            continue
        votes.append(make_vote(role, verdict, thresholds))
    return votes


async def tribunal_panel(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Judge `response` from three perspectives in one call; the same channels and log row
    as the three-call tribunal."""
    thresholds = TribunalThresholds.from_settings(deps.settings)
    messages = with_head(head_of(state, deps), panel_prompt(state))
    try:
        panel = await deps.model.structured(
            Role.ANALYSIS, messages, TribunalPanel, temperature=TRIBUNAL_TEMPERATURE
        )
    except ModelUnavailable:
        raise  # the model cannot be used: the turn fails (events.outcomes)
    except ModelError as exc:
        reason = _failure_reason(exc)
        log.warning(
            "tribunal panel: no readable answer (%s: %s) turn=%s", reason, exc, state.get("turn_id")
        )
        votes = [failed_vote(role, reason) for role in ROLES]
    else:
        votes = panel_votes(panel, thresholds, state.get("turn_id"))
    return verdict_update(state, votes, thresholds)
