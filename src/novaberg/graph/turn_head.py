"""The head every model call of a turn begins with: one system message holding the
turn's shared material — the day, the conversation so far and the utterance —
rendered identically for every role (prompts/turn_head.txt).

Why: a turn makes a dozen calls (perception, situation, router, composer, the three
judges, ...) that all read the same conversation. Each used to render it in its own form
and place, so no call began like another and every prefix cache (the in-process
`LlamaRAMCache`, llama.cpp's and vLLM's servers) evaluated the same text again. With the
head first and each role's task after it, the cache evaluates the head once per turn.

Identical means byte-identical across the human and the character graph: the history is
the pair's session turns *before* this turn (the current turn's own entries are dropped
wherever they are already stored), so it reads the same before and after the turn's user
entry is written. Roles that read no conversation (salience, the short-term condensing)
do not get the head — it would grow their prompts (docs/behaviour/llm.md#turn-head).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import stimulus_text
from novaberg.llm.base import Message
from novaberg.memory.session_view import numbered_view
from novaberg.prompts import render


def today(deps: GraphDeps) -> str:
    """The pair's day in its time zone, as the head shows it (DD.MM.YYYY)."""
    try:
        zone: ZoneInfo | None = ZoneInfo(deps.settings.timezone)
    except Exception:  # unknown zone: the date is context only
        zone = None
    return datetime.fromtimestamp(deps.clock(), zone).strftime("%d.%m.%Y")


def earlier_turns(turns: Sequence[Mapping[str, Any]], turn_id: str | None) -> list[dict]:
    """The session turns before this turn: its own entries (the user's utterance, once
    written) are left out — the utterance follows as `[AKTUELLER PROMPT]`."""
    return [dict(turn) for turn in turns if not turn_id or turn.get("turn_id") != turn_id]


def turn_head(
    character: str, date: str, turns: Sequence[Mapping[str, Any]], stimulus: str
) -> Message:
    """The head as a system message (`turns`: the turns before this one; `character`
    names the character's lines in the history)."""
    content = render(
        "turn_head",
        datum=date,
        verlauf=numbered_view([dict(turn) for turn in turns], character_label=character.upper()),
        reiz=stimulus,
    )
    return {"role": "system", "content": content}


def head_of(
    state: Mapping[str, Any], deps: GraphDeps, turns: Sequence[Mapping[str, Any]] | None = None
) -> Message:
    """This run's head from its state (`turns`: the session turns when the node read them
    itself, else the run's `raw_turns`)."""
    seen = turns if turns is not None else state.get("raw_turns") or []
    return turn_head(
        str(state.get("character_id") or "nova").capitalize(),
        today(deps),
        earlier_turns(seen, state.get("turn_id")),
        stimulus_text(state),
    )


def with_head(head: Message, prompt: str) -> list[Message]:
    """The messages of a call: the turn's head, then the role's own prompt."""
    return [head, {"role": "user", "content": prompt}]
