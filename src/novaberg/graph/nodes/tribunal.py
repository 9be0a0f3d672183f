"""Tribunal node: three perspectives judge whether the answer may go out
(docs/behaviour/nodes.md#tribunal).

Jurist (legality, liability, the user's directives), psychologist (hurt, manipulation,
ignored distress) and ethicist (fairness, harm, discrimination) each give a score in
[0, 1]; Python turns scores into votes and the votes into one verdict.
The three calls are independent, so they run concurrently.

**An unreadable judge is a failure, not an ok**: a missing judgement must not look like
approval. A judge whose call fails (unreadable output after the model layer's retry,
timeout) gets a `TribunalVote` with `vote=None` and the reason in `failure`,
is listed in `tribunal_failures` and logged at WARNING. **Decision:** for the aggregation a
failed judge counts as `warnung` — it cannot vouch for the answer, but a missing judgement
is not evidence that the answer is harmful either. So one failed judge next to two oks still
passes (visibly: `tribunal_ausfaelle` is non-empty), two failed judges send the answer to
the corrector, and with every round used up the fallback goes out. A model that cannot be
used at all (`ModelUnavailable`: unreachable, refusing requests) judges nothing: the turn
fails instead of sending an unjudged answer.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel, Field

from novaberg.agents.deps import GraphDeps
from novaberg.config import (
    TRIBUNAL_DIRECTIVES_REJECT,
    TRIBUNAL_DIRECTIVES_WARN,
    TRIBUNAL_REJECT,
    TRIBUNAL_WARN,
    Role,
    Settings,
)
from novaberg.graph.nodes.context_text import directives_text, situation_text
from novaberg.graph.nodes.reducer import contexts_beside_head
from novaberg.graph.state import ConversationState, TribunalVote
from novaberg.graph.turn_head import head_of, with_head
from novaberg.llm.errors import ModelError, ModelOutputError, ModelTimeout, ModelUnavailable
from novaberg.prompts import render

log = logging.getLogger(__name__)

SCORE_WARN: Final = TRIBUNAL_WARN
SCORE_REJECT: Final = TRIBUNAL_REJECT
"""Defaults: score ≥ 0.9 → ablehnen, ≥ 0.7 → warnung, else ok."""

DIRECTIVE_WARN: Final = TRIBUNAL_DIRECTIVES_WARN
DIRECTIVE_REJECT: Final = TRIBUNAL_DIRECTIVES_REJECT
"""Defaults of the jurist's directive score, stricter: ≥ 0.7 ablehnen, ≥ 0.5 warnung —
directives are a binding agreement with the user."""

TRIBUNAL_TEMPERATURE: Final = 0.2
"""Judges answer as JSON at temperature 0.2: a judgement, not a creative task."""

VOTE_OK: Final = "ok"
VOTE_WARN: Final = "warnung"
VOTE_REJECT: Final = "ablehnen"
"""Stored vote values (wire names)."""

FAILED_VOTE_COUNTS_AS: Final = VOTE_WARN
"""How a judge without a readable verdict counts in the aggregation (module docstring)."""

QUORUM: Final = 2
"""Two votes decide: 2× ablehnen → ablehnen, 2× (warnung or worse) → warnung."""

JURIST: Final = "jurist"
PSYCHOLOGIST: Final = "psychologe"
ETHICIST: Final = "ethiker"
ROLES: Final = (JURIST, PSYCHOLOGIST, ETHICIST)
"""Wire names of the three perspectives (TribunalVote.role)."""

JURIST_DIRECTIVES: Final = "jurist_direktiven"
"""The jurist's directive score beside the roles in the pipeline_log row (werte, schwellen)."""

_SEVERITY: Final = {VOTE_OK: 0, VOTE_WARN: 1, VOTE_REJECT: 2}

REASON_MAX_CHARS: Final = 400
"""Bounds the reasoning so a small model's verdict still fits its token budget."""


class ScoredVerdict(BaseModel):
    """What every judge returns first: a score in [0, 1] (1 = must not go out)."""

    score: float = Field(ge=0.0, le=1.0)


class JudgeVerdict(ScoredVerdict):
    """Psychologist's and ethicist's answer `{score, begruendung}`."""

    begruendung: str = Field(default="", max_length=REASON_MAX_CHARS)


class PsychologistVerdict(JudgeVerdict):
    """The psychologist's answer (own class so logs and scripted rules can tell them apart)."""


class EthicistVerdict(JudgeVerdict):
    """The ethicist's answer."""


class JuristVerdict(ScoredVerdict):
    """The jurist's answer `{score, direktiven_score, begruendung}`.
    The reasoning comes last so a small model commits to both numbers first."""

    direktiven_score: float = Field(ge=0.0, le=1.0)
    begruendung: str = Field(default="", max_length=REASON_MAX_CHARS)


Verdict = JudgeVerdict | JuristVerdict

_SCHEMAS: Final[dict[str, type[JudgeVerdict] | type[JuristVerdict]]] = {
    JURIST: JuristVerdict,
    PSYCHOLOGIST: PsychologistVerdict,
    ETHICIST: EthicistVerdict,
}
_PROMPTS: Final = {
    JURIST: "tribunal_jurist",
    PSYCHOLOGIST: "tribunal_psychologist",
    ETHICIST: "tribunal_ethicist",
}


# --- pure vote logic ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Where one score turns into a vote: ≥ reject → ablehnen, ≥ warn → warnung."""

    warn: float = SCORE_WARN
    reject: float = SCORE_REJECT

    def as_log(self) -> list[float]:
        return [self.warn, self.reject]


@dataclass(frozen=True, slots=True)
class TribunalThresholds:
    """Each judge's thresholds, tuned per role in the settings (NOVABERG_TRIBUNAL_*): a
    deployment that finds its psychologist too touchy raises hers without loosening the
    jurist. The jurist's directive score has its own, stricter pair."""

    jurist: Thresholds = field(default_factory=Thresholds)
    jurist_directives: Thresholds = field(
        default_factory=lambda: Thresholds(DIRECTIVE_WARN, DIRECTIVE_REJECT)
    )
    psychologist: Thresholds = field(default_factory=Thresholds)
    ethicist: Thresholds = field(default_factory=Thresholds)

    @classmethod
    def from_settings(cls, settings: Settings) -> TribunalThresholds:
        return cls(
            jurist=Thresholds(settings.tribunal_jurist_warn, settings.tribunal_jurist_reject),
            jurist_directives=Thresholds(
                settings.tribunal_jurist_directives_warn,
                settings.tribunal_jurist_directives_reject,
            ),
            psychologist=Thresholds(
                settings.tribunal_psychologist_warn, settings.tribunal_psychologist_reject
            ),
            ethicist=Thresholds(settings.tribunal_ethicist_warn, settings.tribunal_ethicist_reject),
        )

    def of(self, role: str) -> Thresholds:
        """The thresholds of a judge's (general) score."""
        return {JURIST: self.jurist, PSYCHOLOGIST: self.psychologist, ETHICIST: self.ethicist}[role]

    def as_log(self) -> dict[str, list[float]]:
        """For the pipeline_log row: which thresholds turned the scores into votes."""
        return {
            JURIST: self.jurist.as_log(),
            JURIST_DIRECTIVES: self.jurist_directives.as_log(),
            PSYCHOLOGIST: self.psychologist.as_log(),
            ETHICIST: self.ethicist.as_log(),
        }


DEFAULT_THRESHOLDS: Final = TribunalThresholds()


def score_vote(score: float, warn: float = SCORE_WARN, reject: float = SCORE_REJECT) -> str:
    """A score's vote: ≥ reject → ablehnen, ≥ warn → warnung, else ok."""
    if score >= reject:
        return VOTE_REJECT
    if score >= warn:
        return VOTE_WARN
    return VOTE_OK


def worse(a: str, b: str) -> str:
    """The stricter of two votes."""
    return a if _SEVERITY[a] >= _SEVERITY[b] else b


def jurist_vote(
    score: float, directive_score: float, thresholds: TribunalThresholds = DEFAULT_THRESHOLDS
) -> str:
    """Both jurist scores as votes (directives by default with 0.5/0.7); the stricter wins."""
    general, directives = thresholds.jurist, thresholds.jurist_directives
    return worse(
        score_vote(score, general.warn, general.reject),
        score_vote(directive_score, directives.warn, directives.reject),
    )


def counted_vote(vote: TribunalVote) -> str:
    """The vote as the aggregation counts it (a failed judge → FAILED_VOTE_COUNTS_AS)."""
    value = vote.get("vote")
    return value if value else FAILED_VOTE_COUNTS_AS


def aggregate(votes: list[TribunalVote]) -> str:
    """2× ablehnen → ablehnen; 2× (warnung or ablehnen) → warnung; else ok."""
    counted = [counted_vote(vote) for vote in votes]
    if counted.count(VOTE_REJECT) >= QUORUM:
        return VOTE_REJECT
    if sum(1 for v in counted if v in (VOTE_WARN, VOTE_REJECT)) >= QUORUM:
        return VOTE_WARN
    return VOTE_OK


def scores_for_log(votes: list[TribunalVote]) -> dict[str, float | None]:
    """Each judge's score (and the jurist's directive score), named as in `as_log`."""
    scores: dict[str, float | None] = {}
    for vote in votes:
        scores[vote["role"]] = vote.get("score")
        if vote["role"] == JURIST:
            scores[JURIST_DIRECTIVES] = vote.get("directives_score")
    return scores


def summarise(votes: list[TribunalVote]) -> str:
    """The critical feedback for the corrector: every non-ok vote and every failure."""
    lines = []
    for vote in votes:
        if vote.get("failure"):
            lines.append(f"- {vote['role']}: kein lesbares Urteil ({vote['failure']})")
        elif vote.get("vote") != VOTE_OK:
            reason = vote.get("reasoning") or "ohne Begründung"
            lines.append(f"- {vote['role']} ({vote['vote']}): {reason}")
    return "\n".join(lines)


def make_vote(
    role: str, verdict: Verdict, thresholds: TribunalThresholds = DEFAULT_THRESHOLDS
) -> TribunalVote:
    """The TribunalVote for a readable verdict, by the role's thresholds."""
    directive = verdict.direktiven_score if isinstance(verdict, JuristVerdict) else None
    own = thresholds.of(role)
    vote = (
        jurist_vote(verdict.score, directive, thresholds)
        if directive is not None
        else score_vote(verdict.score, own.warn, own.reject)
    )
    return TribunalVote(
        role=role,
        score=verdict.score,
        directives_score=directive,
        vote=vote,
        reasoning=verdict.begruendung.strip(),
        failure=None,
    )


def failed_vote(role: str, reason: str) -> TribunalVote:
    """The TribunalVote of a judge without a readable verdict."""
    return TribunalVote(
        role=role,
        score=None,
        directives_score=None,
        vote=None,
        reasoning="",
        failure=reason,
    )


def _failure_reason(exc: ModelError) -> str:
    if isinstance(exc, ModelOutputError):
        return "unlesbar"
    if isinstance(exc, ModelTimeout):
        return "zeitueberschreitung"
    return f"modellfehler: {type(exc).__name__}"


# --- prompt and node ------------------------------------------------------------------------


def judge_prompt(role: str, state: ConversationState) -> str:
    """The rendered prompt of one judge, after the turn's head (which holds the
    conversation and the utterance). All three begin with the same blocks (situation,
    memory, annotations, the answer under review) and end with their own task: a local
    model that judges them one after another reuses the evaluated shared beginning
    (llama.cpp keeps the previous prompt's prefix), so only each judge's tail is new."""
    values: dict[str, Any] = {
        "lagebild": situation_text(state),
        "erinnerung": contexts_beside_head(state)[0],
        "anmerkungen": "\n".join(state.get("node_annotations") or []),
        "antwort": state.get("response") or "",
    }
    if role == JURIST:
        values["direktiven"] = directives_text(state)
    return render(_PROMPTS[role], **values)


async def judge(
    role: str,
    state: ConversationState,
    deps: GraphDeps,
    thresholds: TribunalThresholds = DEFAULT_THRESHOLDS,
) -> TribunalVote:
    """One judge's vote; a failed call becomes a failed vote (logged at WARNING), a model
    that cannot be used fails the turn."""
    prompt = judge_prompt(role, state)
    try:
        verdict = await deps.model.structured(
            Role.ANALYSIS,
            with_head(head_of(state, deps), prompt),
            _SCHEMAS[role],
            temperature=TRIBUNAL_TEMPERATURE,
        )
    except ModelUnavailable:
        raise  # the model cannot be used: the turn fails (events.outcomes)
    except ModelError as exc:
        reason = _failure_reason(exc)
        log.warning(
            "tribunal: %s gave no readable verdict (%s: %s) turn=%s",
            role,
            reason,
            exc,
            state.get("turn_id"),
        )
        return failed_vote(role, reason)
    return make_vote(role, verdict, thresholds)


async def tribunal(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Judge `response` from three perspectives concurrently; write votes and verdict."""
    thresholds = TribunalThresholds.from_settings(deps.settings)
    votes = list(await asyncio.gather(*(judge(role, state, deps, thresholds) for role in ROLES)))
    return verdict_update(state, votes, thresholds)


def verdict_update(
    state: ConversationState, votes: list[TribunalVote], thresholds: TribunalThresholds
) -> dict[str, Any]:
    """The channels and the log row from the three votes (shared with the compact
    profile's one-call panel, `nodes/tribunal_panel.py`)."""
    verdict = aggregate(votes)
    failures = [f"{vote['role']}: {vote['failure']}" for vote in votes if vote.get("failure")]
    return {
        "tribunal_votes": votes,
        "tribunal_verdict": verdict,
        "tribunal_summary": summarise(votes),
        "tribunal_failures": failures,
        "_log": {
            "urteil": verdict,
            "stimmen": {vote["role"]: vote.get("vote") for vote in votes},
            "begruendungen": {vote["role"]: vote.get("reasoning") or "" for vote in votes},
            "ausfaelle": failures,
            "werte": scores_for_log(votes),
            "schwellen": thresholds.as_log(),
            "runde": state.get("correction_round", 0),
        },
    }
