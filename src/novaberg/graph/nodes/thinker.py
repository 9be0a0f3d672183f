"""Thinker node: a fact check of the answer before the tribunal (docs/behaviour/nodes.md#thinker).

Runs only when the answer or the stimulus states facts (dates, times, amounts — the fact
indicators below) or the router asked for the web (`needs_web`). The check is a ReAct
loop of at most `MAX_ITERATIONS` structured calls (temperature 0.15): each answers either
`{ergebnis: WERKZEUG, werkzeug: "name(parameter)"}` — the tool runs
(`graph/thinker_tools.py`; a repeated call is answered from the per-turn cache with a
hint) and its observation is added to the next call — or the verdict
`{ergebnis: OK|KORREKTUR, probleme, korrigierte_antwort}`; a correction replaces the
response. The web tools are offered only with a search provider (`NOVABERG_SEARCH_URL`).

**Double failure → self-trigger** (docs/behaviour/events.md#self-trigger). If the check
produces nothing usable (unreadable/failed call, or KORREKTUR without a corrected answer)
and still nothing after two follow-up calls, Nova admits it ("Hmm... ich muss das nochmal
durchgehen.") and asks for a second run: `self_trigger=True` and a `self_trigger_payload`
that *inherits* the turn_id and carries exactly one stimulus place plus `gedanke_arousal`,
both read through `agents/stimulus.py` — the same accessor the retry run reads them with, so
the two cannot drift apart. Never in a run that already is such a retry
(`thinker_unsicher_retry` in the payload): that would loop.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Final, Literal

from pydantic import BaseModel, Field

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import (
    ORIGIN_OWN_THOUGHT,
    ORIGIN_USER,
    stimulus_arousal,
    stimulus_is_own_thought,
    stimulus_text,
)
from novaberg.config import Role
from novaberg.graph.nodes.context_text import task_text
from novaberg.graph.state import ConversationState
from novaberg.graph.thinker_tools import ThinkerTools, parse_call, tools_text
from novaberg.llm.errors import ModelError, ModelUnavailable
from novaberg.prompts import render, user_message
from novaberg.wire import (
    FIELD_MESSAGE_IDS,
    FIELD_ORIGIN,
    FIELD_OWN_THOUGHT,
    FIELD_THINKER_RETRY,
    FIELD_THOUGHT_AROUSAL,
    FIELD_TURN_ID,
    FIELD_USER_PROMPT,
)

log = logging.getLogger(__name__)

THINKER_TEMPERATURE: Final = 0.15
"""Low: a check, not a creative task."""

FOLLOW_UP_CALLS: Final = 2
"""A check that produced nothing is retried twice before it counts as a double failure."""

UNSURE_SUFFIX: Final = "Hmm... ich muss das nochmal durchgehen."
"""Appended to the answer on a double failure."""

RETRY_FLAG: Final = FIELD_THINKER_RETRY
"""Payload flag of the retry run; such a run never self-triggers again."""

RESULT_INACTIVE: Final = "inaktiv"
RESULT_OK: Final = "ok"
RESULT_CORRECTED: Final = "korrektur"
RESULT_FAILED: Final = "ausfall"
RESULT_FAILED_ON_RETRY: Final = "ausfall_im_retry"
"""`thinker_ergebnis` values."""

_MONTHS = (
    "januar februar märz maerz april mai juni juli august september oktober november dezember "
    "january february march june july october december"
)
_WEEKDAYS = (
    "montag dienstag mittwoch donnerstag freitag samstag sonntag "
    "monday tuesday wednesday thursday friday saturday sunday"
)
FACT_INDICATORS: Final = re.compile(
    r"\b(?:am|um)\s|\buhr\b|termin|%|\d\s*km\b|\d{1,2}:\d{2}|\d{1,2}\.\d{1,2}\.|\b(?:"
    + "|".join(_MONTHS.split() + _WEEKDAYS.split())
    + r")\b",
    re.IGNORECASE,
)
"""Fact indicators: "am ", "um ", "Uhr", "Termin", months, weekdays, "%", "km", clock times
(12:30) and dates (3.5.). "am"/"um" are matched as words: bare substrings would also fire
inside "warum " or "Baum "."""


MAX_ITERATIONS: Final = 5
"""Model calls of the ReAct loop that may call a tool or give the verdict."""

RESULT_TOOL: Final = "WERKZEUG"


class ThinkerCheck(BaseModel):
    """One step of the check: a tool call (`ergebnis` WERKZEUG) or the verdict."""

    ergebnis: Literal["OK", "KORREKTUR", "WERKZEUG"]
    werkzeug: str = Field(default="", max_length=400)
    probleme: str = Field(default="", max_length=400)
    korrigierte_antwort: str = ""


def needs_check(state: ConversationState, stimulus: str, response: str) -> bool:
    """Activation: a fact indicator in answer or stimulus, or `needs_web`."""
    if state.get("needs_web"):
        return True
    return bool(FACT_INDICATORS.search(response) or FACT_INDICATORS.search(stimulus))


def is_retry_run(state: ConversationState) -> bool:
    payload = state.get("event_payload") or {}
    return bool(payload.get(RETRY_FLAG))


def retry_payload(state: ConversationState) -> dict[str, Any]:
    """The payload of the second run: same turn, same stimulus place, same thought arousal."""
    text = stimulus_text(state)
    payload: dict[str, Any] = {}
    if stimulus_is_own_thought(state):
        payload[FIELD_OWN_THOUGHT] = text
        payload[FIELD_ORIGIN] = ORIGIN_OWN_THOUGHT
    else:
        payload[FIELD_USER_PROMPT] = text
        payload[FIELD_ORIGIN] = ORIGIN_USER
    payload[FIELD_THOUGHT_AROUSAL] = stimulus_arousal(state)
    payload[FIELD_TURN_ID] = state.get("turn_id") or ""
    payload[FIELD_MESSAGE_IDS] = list(state.get("message_ids") or [])
    payload[RETRY_FLAG] = True
    return payload


def _usable(check: ThinkerCheck) -> bool:
    return check.ergebnis == "OK" or (
        check.ergebnis == "KORREKTUR" and bool(check.korrigierte_antwort.strip())
    )


def _prompt(
    state: ConversationState,
    stimulus: str,
    response: str,
    tools: ThinkerTools,
    observations: list[str],
    last: bool,
) -> str:
    return render(
        "thinker",
        werkzeuge="" if last else tools_text(tools.names),
        letzter_schritt=LAST_STEP_NOTE if last else "",
        reiz=stimulus,
        antwort=response,
        erinnerung=state.get("memory_context") or "",
        aufgabe=task_text(state),
        beobachtungen="\n\n".join(observations),
    )


LAST_STEP_NOTE: Final = "Keine Werkzeuge mehr: gib jetzt dein Ergebnis (OK oder KORREKTUR)."


async def run_check(
    state: ConversationState, deps: GraphDeps, stimulus: str, response: str
) -> tuple[ThinkerCheck | None, list[str], list[str]]:
    """The ReAct loop: (verdict or None, one failure note per unusable call, the tool
    calls made). At most `MAX_ITERATIONS` steps; an unusable call (failed, unreadable,
    KORREKTUR without an answer, a tool call in the last step) is retried up to
    `FOLLOW_UP_CALLS` times before the check counts as failed."""
    tools = ThinkerTools(state, deps)
    observations: list[str] = []
    calls: list[str] = []
    failures: list[str] = []
    steps = 0
    while steps < MAX_ITERATIONS and len(failures) <= FOLLOW_UP_CALLS:
        last = steps == MAX_ITERATIONS - 1
        prompt = _prompt(state, stimulus, response, tools, observations, last)
        try:
            check = await deps.model.structured(
                Role.ANALYSIS, user_message(prompt), ThinkerCheck, temperature=THINKER_TEMPERATURE
            )
        except ModelUnavailable:
            raise  # the model cannot be used: the turn fails (events.outcomes)
        except ModelError as exc:
            failures.append(type(exc).__name__)
            continue
        if check.ergebnis == RESULT_TOOL:
            parsed = parse_call(check.werkzeug)
            if parsed is None or last:
                failures.append("werkzeug_ohne_aufruf" if parsed is None else "kein_ergebnis")
                continue
            steps += 1
            observation, cached = await tools.call(*parsed)
            calls.append(f"{parsed[0]}({parsed[1]})" + (" [cache]" if cached else ""))
            observations.append(f"[BEOBACHTUNG {steps}] {parsed[0]}({parsed[1]})\n{observation}")
            continue
        if _usable(check):
            return check, failures, calls
        failures.append("korrektur_ohne_antwort")
    return None, failures, calls


async def thinker(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Fact-check `response`; correct it, or on a double failure request a second run."""
    stimulus = stimulus_text(state)
    response = state.get("response") or ""
    if not needs_check(state, stimulus, response):
        return {"thinker_result": RESULT_INACTIVE, "self_trigger": False}
    check, failures, calls = await run_check(state, deps, stimulus, response)
    if check is not None:
        if check.ergebnis == "KORREKTUR":
            return {
                "response": check.korrigierte_antwort.strip(),
                "thinker_result": RESULT_CORRECTED,
                "self_trigger": False,
                "_log": {
                    "ergebnis": RESULT_CORRECTED,
                    "probleme": check.probleme[:400],
                    "werkzeuge": calls,
                },
            }
        return {
            "thinker_result": RESULT_OK,
            "self_trigger": False,
            "_log": {"ergebnis": RESULT_OK, "werkzeuge": calls},
        }
    if is_retry_run(state):
        log.warning(
            "thinker: check failed again in the retry run (turn=%s, %s); no further trigger",
            state.get("turn_id"),
            failures,
        )
        return {
            "thinker_result": RESULT_FAILED_ON_RETRY,
            "self_trigger": False,
            "_log": {"ergebnis": RESULT_FAILED_ON_RETRY, "fehlversuche": failures},
        }
    log.warning(
        "thinker: double failure (turn=%s, %s); self-trigger requested",
        state.get("turn_id"),
        failures,
    )
    suffixed = f"{response.rstrip()} {UNSURE_SUFFIX}" if response.strip() else UNSURE_SUFFIX
    return {
        "response": suffixed,
        "thinker_result": RESULT_FAILED,
        "self_trigger": True,
        "self_trigger_payload": retry_payload(state),
        "_log": {"ergebnis": RESULT_FAILED, "fehlversuche": failures},
    }
