"""Query rewrite of the enricher (docs/behaviour/nodes.md#enricher): one model line that
turns the utterance into a self-contained memory search text using the conversation so
far ("und wann war das nochmal?" → "Wann war der Umzug nach Köln?").

`suchtext_herkunft` records where the search text came from, so a turn can later tell a
search without hits from a search with the wrong key:

    rewrite             the model's line was used
    abgeschaltet        rewriting is switched off (NOVABERG_QUERY_REWRITE=false)
    zu_wenig_verlauf    fewer than two turns: nothing to resolve against
    verlauf_leer        two or more turns, but none with text
    leer                the model answered nothing usable
    zu_lang             the answer was longer than 300 characters
    aufruf_gescheitert  the answer was unusable (timeout, over 20 s, malformed); a model
                        that cannot be used at all ends the turn instead

In every case but `rewrite` the raw utterance is the search text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from novaberg.config import Role
from novaberg.graph.turn_head import with_head
from novaberg.llm.base import LLM, Message
from novaberg.llm.errors import ModelError, ModelUnavailable
from novaberg.prompts import render

log = logging.getLogger(__name__)

REWRITE: Final = "rewrite"
SWITCHED_OFF: Final = "abgeschaltet"
TOO_LITTLE_HISTORY: Final = "zu_wenig_verlauf"
HISTORY_EMPTY: Final = "verlauf_leer"
EMPTY: Final = "leer"
TOO_LONG: Final = "zu_lang"
CALL_FAILED: Final = "aufruf_gescheitert"
ORIGINS: Final = (
    REWRITE,
    SWITCHED_OFF,
    TOO_LITTLE_HISTORY,
    HISTORY_EMPTY,
    EMPTY,
    TOO_LONG,
    CALL_FAILED,
)
"""Every `suchtext_herkunft` value."""

MIN_TURNS: Final = 2
MAX_CHARS: Final = 300
TIMEOUT_S: Final = 20.0
REWRITE_TEMPERATURE: Final = 0.1
REWRITE_MAX_TOKENS: Final = 80


@dataclass(frozen=True, slots=True)
class SearchText:
    text: str
    origin: str


def precheck(enabled: bool, turns: Sequence[Mapping[str, Any]]) -> str | None:
    """The origin when no call is made, else None (call the model)."""
    if not enabled:
        return SWITCHED_OFF
    if len(turns) < MIN_TURNS:
        return TOO_LITTLE_HISTORY
    if not any(str(turn.get("inhalt") or "").strip() for turn in turns):
        return HISTORY_EMPTY
    return None


def accept(raw: str, answer: str | None) -> SearchText:
    """The model's answer checked: first non-empty line, ≤ 300 chars, else the raw text."""
    line = next((ln.strip() for ln in (answer or "").splitlines() if ln.strip()), "")
    line = line.strip().strip('"').strip()
    if not line:
        return SearchText(raw, EMPTY)
    if len(line) > MAX_CHARS:
        return SearchText(raw, TOO_LONG)
    return SearchText(line, REWRITE)


async def rewrite_query(
    model: LLM, raw: str, turns: Sequence[Mapping[str, Any]], head: Message, *, enabled: bool
) -> SearchText:
    """The search text and its origin (see the module docstring). `head` is the turn's
    head (turn_head.py): the conversation and the utterance the rewrite reads."""
    skipped = precheck(enabled, turns)
    if skipped is not None:
        return SearchText(raw, skipped)
    prompt = render("query_rewrite")
    try:
        answer = await asyncio.wait_for(
            model.chat(
                Role.ANALYSIS,
                with_head(head, prompt),
                temperature=REWRITE_TEMPERATURE,
                max_tokens=REWRITE_MAX_TOKENS,
            ),
            TIMEOUT_S,
        )
    except ModelUnavailable:
        raise  # the model cannot be used: the turn fails (events.outcomes)
    except (ModelError, TimeoutError) as exc:
        log.warning("query rewrite failed (%s); raw text searched", type(exc).__name__)
        return SearchText(raw, CALL_FAILED)
    return accept(raw, answer)
