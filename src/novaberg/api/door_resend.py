"""The OpenAI door's resend: the same last message again is a regenerate, not a new message
(docs/behaviour/events.md#message-controls).

Open WebUI's "Try Again" and SillyTavern's regenerate/swipe send the conversation again
without the answer they replace: its last user message is the one Nova answered last. Such a
request asks for another answer to that turn, so it is answered by a regenerate
(events/turn_controls.py) and the history keeps the message once.

Told apart from a person who really writes the same words twice: then the client's
conversation holds Nova's stored answer right before the repeated message (the person saw
it and wrote again). A resend never does — the answer it replaces is cut off.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any, Final

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.api.chat import Reply, error_reply
from novaberg.events.intake import Accepted
from novaberg.events.turn_controls import TurnControlError, TurnControls
from novaberg.pair import Pair
from novaberg.store import turn_records

SETTLE_WAIT: Final = 10.0
SETTLE_POLL: Final = 0.05


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def replaces_answer(
    messages: Sequence[dict[str, Any]], stored_user: str, stored_answer: str
) -> bool:
    """Whether `messages` resends the stored last user message (see the module docstring)."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    if last < 0 or _text(messages[last].get("content")).strip() != stored_user.strip():
        return False
    before = messages[last - 1] if last > 0 else None
    answered = (
        before is not None
        and before.get("role") == "assistant"
        and _text(before.get("content")).strip() == stored_answer.strip()
    )
    return not answered


async def _settled(controls: TurnControls, pair: Pair, messages: Sequence[dict[str, Any]]) -> None:
    """Wait (at most `SETTLE_WAIT` s) while the turn of a possibly resent message still runs:
    its answer may have left while the run stores it (the post-run), and a client that
    retries at once must find it stored."""
    user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    if user is None:
        return
    text = _text(user.get("content")).strip()
    deadline = time.monotonic() + SETTLE_WAIT
    while await controls.busy(pair) and time.monotonic() < deadline:
        turns = await turn_records.last_turns(controls.redis, pair, 2)
        if not any(str(t.get("inhalt") or "").strip() == text for t in turns):
            return  # another message runs: not a resend of the stored one
        await asyncio.sleep(SETTLE_POLL)


async def regenerate_if_resent(
    redis: aioredis.Redis, pool: AsyncConnectionPool, pair: Pair, messages: Sequence[dict[str, Any]]
) -> Accepted | Reply | None:
    """A regenerate of the last turn when `messages` resends its message: the receipt of the
    message it answers again (its last id), or a refusal; None: not a resend."""
    controls = TurnControls(redis, pool)
    await _settled(controls, pair, messages)
    exchange = await controls.last_exchange(pair)
    if exchange is None:
        return None
    user, answer = exchange
    if not replaces_answer(
        messages, str(user.get("inhalt") or ""), str(answer.get("inhalt") or "")
    ):
        return None
    try:
        started = await controls.regenerate(pair)
    except TurnControlError as exc:
        return error_reply(exc.status, exc.code, exc.detail)
    return Accepted(message_id=started.message_ids[-1], received_at=time.time())
