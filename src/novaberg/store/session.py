"""Session turns: the pair's running conversation in `session:{u}:{c}:turns`
(docs/behaviour/memory.md#session).

A turn is a JSON dict (`rolle`, `inhalt`, `zeit`, `intentionen`, `emotion`, `arousal`, `modus`,
`kern`, `emotions_vektor`, `sprach_stil`, `beziehungs_dynamik`, `tone`, `herkunft`, plus
`themen`/`embedding` on user turns and `turn_id`/`nachrichten_ids`). The dispatcher is the
**only** writer and writes each turn complete, in one step — except the HumanGraph's user
turn, which is stored as soon as the CharacterGraph needs it and gets the two fields that
come later (`intentionen` from salience, `kern` from condensing) filled in by
`complete_turn` (docs/behaviour/graphs.md#human-graph).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

import orjson
import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store import session_lua as lua
from novaberg.store.scripts import script

log = logging.getLogger(__name__)

# user turns carry an embedding; orjson parses a long session several times faster
_loads: Callable[[str], Any] = orjson.loads
_DECODE_ERRORS: Final[tuple[type[Exception], ...]] = (orjson.JSONDecodeError, TypeError)


def _dumps(turn: dict[str, Any]) -> str:
    return orjson.dumps(turn).decode("utf-8")


async def append_turn(redis: aioredis.Redis, pair: Pair, turn: dict[str, Any]) -> int:
    """RPUSH one complete turn and refresh the session TTL; returns the new list length."""
    return await _append(redis, keys.session_turns(pair), _dumps(turn))


async def append_open_turn(redis: aioredis.Redis, pair: Pair, turn: dict[str, Any]) -> int:
    """`append_turn` for a turn `complete_turn` fills in later: the item stored is
    remembered, so completing it needs no read first (one compare-and-set)."""
    key = keys.session_turns(pair)
    payload = _dumps(turn)
    length = await _append(redis, key, payload)
    _OPEN_TURNS[(key, str(turn.get("turn_id")), str(turn.get("rolle")))] = payload
    while len(_OPEN_TURNS) > OPEN_TURNS_KEPT:  # turns never completed (a failed run)
        del _OPEN_TURNS[next(iter(_OPEN_TURNS))]
    return length


async def _append(redis: aioredis.Redis, key: str, payload: str) -> int:
    async with redis.pipeline(transaction=True) as pipe:
        pipe.rpush(key, payload)
        pipe.expire(key, keys.SESSION_TTL)
        length, _ = await pipe.execute()
    return int(length)


OPEN_TURNS_KEPT: Final = 256
"""Open turns this process remembers (oldest forgotten first); a turn forgotten, or one
appended by another process, is completed by reading it first."""

_OPEN_TURNS: dict[tuple[str, str, str], str] = {}
"""(session key, turn id, role) → the item `append_open_turn` stored."""


COMPLETE_RETRIES: Final = 5
"""Optimistic retries of `complete_turn` when another writer touched the session."""

COMPLETE_WINDOW: Final = 8
"""`complete_turn` reads the newest 8 turns first (the whole session only if needed)."""


async def complete_turn(
    redis: aioredis.Redis, pair: Pair, turn_id: str, role: str, fields: dict[str, Any]
) -> dict[str, Any] | None:
    """Set `fields` on the stored turn of `turn_id` with `role` (newest first) and return
    the completed turn; None if it is not (or no longer) in the session."""
    turn, _ = await complete_turn_counted(redis, pair, turn_id, role, fields)
    return turn


async def complete_turn_counted(
    redis: aioredis.Redis, pair: Pair, turn_id: str, role: str, fields: dict[str, Any]
) -> tuple[dict[str, Any] | None, int | None]:
    """`complete_turn`, plus the session's length after the write (None with no turn), which
    spares the summary step its LLEN. A turn this process stored with `append_open_turn`:
    one script call that compares and sets it. Otherwise, or when it is no longer there as
    stored: two script calls, find the turn, then compare and set it — a concurrent append
    or summary trim is never overwritten (a trim that moved the turn makes the set fail,
    and it is found again)."""
    key = keys.session_turns(pair)
    stored = _OPEN_TURNS.pop((key, turn_id, role), None)
    if stored is not None:
        turn = _loads(stored)
        turn.update(fields)
        set_stored = script(redis, lua.SET_STORED)
        length = int(await set_stored(keys=[key], args=[stored, _dumps(turn), COMPLETE_WINDOW]))
        if length >= 0:
            return turn, length
    find = script(redis, lua.FIND)
    swap = script(redis, lua.SWAP)
    for _ in range(COMPLETE_RETRIES):
        # the turn was appended moments ago: the newest turns are looked at first
        found = await find(keys=[key], args=[turn_id, COMPLETE_WINDOW])
        indices = [int(index) for index in found[1::2]]
        index, turn = _find_turn(found[2::2], turn_id, role)
        if turn is None:
            return None, None
        raw = found[2::2][index]
        turn.update(fields)
        length = int(await swap(keys=[key], args=[indices[index], raw, _dumps(turn)]))
        if length >= 0:
            return turn, length
    log.error("session %s: turn %s not completed after %d tries", pair, turn_id, COMPLETE_RETRIES)
    return None, None


def _find_turn(raw: list[Any], turn_id: str, role: str) -> tuple[int, dict[str, Any] | None]:
    """(position in `raw`, decoded turn) of the first item that is the turn of `turn_id`
    with `role`; `raw` is newest first."""
    for index, item in enumerate(raw):
        text = item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
        if turn_id not in text:  # skip decoding turns that cannot match
            continue
        try:
            turn = _loads(text)
        except _DECODE_ERRORS:
            continue
        if isinstance(turn, dict) and turn.get("turn_id") == turn_id and turn.get("rolle") == role:
            return index, turn
    return -1, None


async def read_turns(
    redis: aioredis.Redis, pair: Pair, limit: int | None = None
) -> list[dict[str, Any]]:
    """The pair's turns, oldest first (the last `limit` if given). Unreadable entries are
    logged and skipped."""
    start = -limit if limit else 0
    return decode_turns(await redis.lrange(keys.session_turns(pair), start, -1), pair)


def decode_turns(raw: list[Any], pair: Pair) -> list[dict[str, Any]]:
    """The LRANGE reply of a session as turns; unreadable entries are logged and skipped."""
    turns: list[dict[str, Any]] = []
    for item in raw:
        try:
            turn = _loads(str(item))
        except _DECODE_ERRORS:
            log.error("session %s: unreadable turn skipped: %.80r", pair, item)
            continue
        if isinstance(turn, dict):
            turns.append(turn)
        else:
            log.error("session %s: non-object turn skipped: %.80r", pair, item)
    return turns


async def read_summary(redis: aioredis.Redis, pair: Pair) -> str:
    """The LLM summary of older turns, "" if none."""
    value = await redis.get(keys.session_summary(pair))
    return str(value) if value else ""


async def end_session(redis: aioredis.Redis, pair: Pair) -> None:
    """End the pair's running conversation now, as 4 quiet hours would: its turns, their
    summary and the understanding of the situation go; the archive, short- and long-term
    memory, emotions and profiles stay. Opening another chat does this
    (docs/behaviour/memory.md#chats), so the prompt's recent conversation is the open chat's."""
    await redis.delete(keys.session_turns(pair), keys.session_summary(pair), keys.situation(pair))
