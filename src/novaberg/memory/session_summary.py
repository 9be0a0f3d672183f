"""Keep the session list short: summarise the oldest turns once it grows too long.

Above 25 turns the oldest 10 are summarised by the model (analysis role, temperature 0.2)
together with the previous summary into `session:{u}:{c}:summary`, and trimmed from
`session:{u}:{c}:turns` (docs/behaviour/memory.md#summary). The list is RPUSHed, oldest first
(`store.session.append_turn`).

A summary that repeats our prompt's instructions (`prompts/leak.py`) is asked for once more
and, leaking again, counts as failed: it is never stored.

Fallback when the summary call fails (model error, timeout, empty or leaking text): the list is cut
to its last 20 turns without a summary and the loss is logged at WARNING with the number of
turns dropped; the previous summary stays untouched.

The trim is atomic and only happens if the oldest turns are still the ones that were
summarised (a Lua check), so a concurrent writer appending at the tail, or a second
summariser, can never make this drop turns nobody summarised.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import redis.asyncio as aioredis

from novaberg.config import Role
from novaberg.llm.base import LLM, Message
from novaberg.llm.errors import ModelError
from novaberg.memory import session_summary_lua as lua
from novaberg.pair import Pair
from novaberg.prompts import render, user_message
from novaberg.prompts.leak import MAX_LOGGED_PHRASES, PROMPT_LEAK, leaked_phrases
from novaberg.store import keys
from novaberg.store.scripts import script
from novaberg.wire import ROLE_ASSISTANT

log = logging.getLogger(__name__)

SUMMARY_ABOVE: Final = 25
"""Summarise when the session holds more than 25 turns."""

SUMMARY_BATCH: Final = 10
"""The oldest 10 turns are summarised and trimmed."""

FALLBACK_KEEP: Final = 20
"""If the summary call fails, keep the last 20 turns."""

SUMMARY_TEMPERATURE: Final = 0.2
"""Summary call temperature."""

LEAK_RETRIES: Final = 1
"""Further summary calls when one repeats prompt text."""

TURN_CHARS: Final = 400
"""A turn's text is cut to this many characters inside the summary prompt."""


class PromptLeakError(ModelError):
    """The summary repeated our prompt's instructions (after the retry)."""


@dataclass(frozen=True, slots=True)
class SummaryOutcome:
    """What `summarise_if_needed` did: "nichts" | "zusammengefasst" | "gekuerzt" (fallback)
    | "uebersprungen" (someone else changed the head meanwhile)."""

    action: str
    length_before: int
    dropped: int = 0
    error: str | None = None


def _turn_line(number: int, turn: Mapping[str, Any], character_label: str) -> str:
    text = " ".join(str(turn.get("inhalt") or "").split())[:TURN_CHARS]
    if turn.get("rolle") == ROLE_ASSISTANT:
        return f"[{number}] {character_label}: {text}"
    emotion = turn.get("emotion") or "neutral"
    return f"[{number}] USER ({emotion}): {text}"


def _decode(items: Sequence[str]) -> list[dict[str, Any]]:
    turns = []
    for item in items:
        try:
            turn = json.loads(item)
        except (TypeError, ValueError):
            turn = {"inhalt": str(item)}
        turns.append(turn if isinstance(turn, dict) else {"inhalt": str(turn)})
    return turns


async def summarise_if_needed(
    redis: aioredis.Redis,
    model: LLM,
    pair: Pair,
    *,
    character_label: str = "NOVA",
    character_name: str = "Nova",
    length: int | None = None,
) -> SummaryOutcome:
    """Summarise and trim the session when it holds more than 25 turns (call after a write).

    `length`: the list length the caller's write just returned (RPUSH answers it), which
    spares the LLEN round trip; read here when not given."""
    turns_key = keys.session_turns(pair)
    if length is None:
        length = int(await redis.llen(turns_key))
    if length <= SUMMARY_ABOVE:
        return SummaryOutcome("nichts", length)
    pipe = redis.pipeline(transaction=False)  # both reads in one round trip
    pipe.lrange(turns_key, 0, SUMMARY_BATCH - 1)
    pipe.get(keys.session_summary(pair))
    batch, stored = await pipe.execute()
    oldest = [str(item) for item in batch]
    previous = stored or ""
    lines = [
        _turn_line(i, turn, character_label) for i, turn in enumerate(_decode(oldest), start=1)
    ]
    prompt = user_message(
        render("session_summary", charakter=character_name, bisher=previous, turns="\n".join(lines))
    )
    try:
        text = await _summary_text(model, prompt, (previous, *lines))
    except ModelError as exc:
        return await _fallback(redis, pair, length, f"{type(exc).__name__}: {exc}")

    trim = script(redis, lua.TRIM_IF_UNCHANGED)
    done = int(
        await trim(
            keys=[turns_key, keys.session_summary(pair)],
            args=[len(oldest), text, keys.SESSION_TTL, *oldest],
        )
    )
    if not done:
        log.info("session %s: head changed during the summary; nothing trimmed", pair)
        return SummaryOutcome("uebersprungen", length)
    return SummaryOutcome("zusammengefasst", length, dropped=len(oldest))


async def _summary_text(model: LLM, prompt: list[Message], material: Sequence[str]) -> str:
    """The model's summary; asked once more when it repeats our prompt's instructions
    (`prompts/leak.py`: a sampled model rarely does so twice). Raises `ModelError` when
    it is empty or leaks again: a leaking summary is never stored."""
    for attempt in range(1 + LEAK_RETRIES):
        text = (await model.chat(Role.ANALYSIS, prompt, temperature=SUMMARY_TEMPERATURE)).strip()
        if not text:
            raise ModelError("empty summary")
        leaked = leaked_phrases(text, material)
        if not leaked:
            return text
        log.warning("session summary repeats prompt text (attempt %d): %s", attempt + 1, leaked)
    raise PromptLeakError(f"{PROMPT_LEAK}: {'; '.join(leaked[:MAX_LOGGED_PHRASES])}")


async def _fallback(redis: aioredis.Redis, pair: Pair, length: int, error: str) -> SummaryOutcome:
    """Keep the last 20 turns, no summary; the loss is logged."""
    turns_key = keys.session_turns(pair)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.llen(turns_key)
        pipe.ltrim(turns_key, -FALLBACK_KEEP, -1)
        before, _ = await pipe.execute()
    dropped = max(0, int(before) - FALLBACK_KEEP)
    log.warning(
        "session %s: summary failed (%s); kept the last %d turns, %d dropped unsummarised",
        pair,
        error,
        FALLBACK_KEEP,
        dropped,
    )
    return SummaryOutcome("gekuerzt", length, dropped=dropped, error=error)
