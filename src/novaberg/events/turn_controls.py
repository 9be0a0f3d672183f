"""Message controls: regenerate the last answer, choose among its alternatives, take the
last message back (before or after the answer), stop a running turn
(docs/behaviour/events.md#message-controls).

Everything here works on the pair's LAST turn only: an older turn has been built upon
(later answers, summaries, the vector's trace) and cannot be taken back honestly.

- **Regenerate** runs the CharacterGraph again for the last answered user turn, from the
  event payload that turn's run began with (`turn_ereignis:{u}:{c}`, recorded by the event
  consumer), without Path 1: the person's words are not stored or perceived again. The old
  answer's traces go first (its session item, history row, archive row and Nova-side
  short-term entries of that turn), the answer's text is kept among the alternatives
  (`antwort_varianten:{u}:{c}`), and the outcome marker of the turn is cleared, so the new
  run's `character_response` names the same turn and ids (a client waiting for those ids —
  the OpenAI door — gets it).
- **Choose** puts another kept alternative back as the answer everywhere the answer lives.
- **Remove** takes the person's last message back: still queued → it leaves the queue;
  in a running turn → the run is ended before its answer leaves (`turn_stopp`), and the
  turn's session item and short-term entries go; answered → message, answer and what the
  turn left in memory go.
- **Stop** ends a running turn before its answer leaves; its ids end in a
  `turn_gescheitert` with reason `gestoppt` (kept in the history, to send again).

Every change is sent to all of the person's clients (`antwort_varianten`, `turn_entfernt`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.events.delivery import Delivery
from novaberg.events.model import MAX_SELF_TRIGGERS, build_event, new_id
from novaberg.events.outcomes import STOPPED, Outcomes, outcome_key
from novaberg.events.queues import push_event
from novaberg.pair import Pair
from novaberg.store import keys, turn_records
from novaberg.store import session as session_store
from novaberg.store.archive import SPEAKER_CHARACTER, SPEAKER_USER
from novaberg.store.failed_turns import FailedTurnLog
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_fields import OBSERVER_ASSISTANT, OBSERVER_USER
from novaberg.wire import (
    FIELD_HUMAN_SALIENCE,
    FIELD_MESSAGE_IDS,
    FIELD_PATH1_TAIL,
    FIELD_REGENERATED,
    FIELD_TURN_ID,
    FIELD_USER_INTENTIONS,
    KIND_MESSAGE,
    MSG_TURN_REMOVED,
    MSG_VARIANTS,
    ROLE_ASSISTANT,
    ROLE_USER,
    SOURCE_USER,
)

log = logging.getLogger(__name__)

POST_RUN_WAIT: Final = 15.0
POST_RUN_POLL: Final = 0.05

MAX_VARIANTS: Final = 10
"""Alternatives kept per turn; a regenerate beyond them is refused (`zu_viele_varianten`)."""

STOP_STOPPED: Final = "gestoppt"
STOP_WITHDRAWN: Final = "zurueckgezogen"
"""`art` of a stop request: end the run (the message stays), or take the message back."""

REMOVED_BEFORE: Final = "zurueckgezogen"
REMOVED_AFTER: Final = "geloescht"
REMOVED_PENDING: Final = "wird_zurueckgezogen"
"""How a message was taken back: before any run, with its answer, or (a run holds it) once
the run has ended — the `turn_entfernt` message follows then."""


class TurnControlError(Exception):
    """A control that cannot be done now: HTTP status, error code, technical detail."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail


@dataclass
class Variants:
    """The answers of the last turn kept by regenerates; `chosen` None: the newest, not yet
    in `texts`, is on its way (or is the session's answer)."""

    turn_id: str
    texts: list[str]
    chosen: int | None
    template: dict[str, Any] = field(default_factory=dict)

    def wire(self) -> dict[str, Any]:
        return {"turn_id": self.turn_id, "texte": self.texts, "gewaehlt": self.chosen}


@dataclass(frozen=True)
class Regenerating:
    turn_id: str
    message_ids: list[str]
    texts: list[str]


@dataclass(frozen=True)
class Removal:
    kind: str
    turn_id: str | None
    message_ids: list[str]


def _stored_event_record(turn_id: str, payload: dict[str, Any], trigger_count: int) -> str:
    return json.dumps({"turn_id": turn_id, "payload": payload, "trigger_count": trigger_count})


async def record_turn_event(
    redis: aioredis.Redis, pair: Pair, turn_id: str, payload: dict[str, Any], trigger_count: int
) -> None:
    """Keep the payload a user turn's CharacterGraph run began with (for a regenerate)."""
    await redis.set(
        keys.turn_event(pair),
        _stored_event_record(turn_id, payload, trigger_count),
        ex=keys.SESSION_TTL,
    )


async def mark_agent_acted(redis: aioredis.Redis, pair: Pair, turn_id: str) -> None:
    """A task agent acted in the turn's run: a regenerate would run its action twice."""
    raw = await redis.get(keys.turn_event(pair))
    record = json.loads(raw) if raw else None
    if isinstance(record, dict) and record.get("turn_id") == turn_id:
        record["agent_handelte"] = True
        await redis.set(keys.turn_event(pair), json.dumps(record), ex=keys.SESSION_TTL)


async def restore_after_failed_regenerate(
    redis: aioredis.Redis, delivery: Delivery, pair: Pair, turn_id: str
) -> None:
    """A regenerate's run ended without an answer: the last kept answer is the turn's answer
    again (session) and every client is told (`antwort_varianten`)."""
    raw = await redis.get(keys.answer_variants(pair))
    data = json.loads(raw) if raw else None
    if not isinstance(data, dict) or data.get("turn_id") != turn_id or not data.get("texte"):
        return
    texts = [str(t) for t in data["texte"]]
    template = dict(data.get("vorlage") or {})
    await session_store.append_turn(redis, pair, {**template, "inhalt": texts[-1]})
    data["gewaehlt"] = len(texts) - 1
    await redis.set(keys.answer_variants(pair), json.dumps(data), ex=keys.SESSION_TTL)
    await delivery.send(
        pair.user_id,
        {
            "typ": MSG_VARIANTS,
            "character_id": pair.character_id,
            "turn_id": turn_id,
            "texte": texts,
            "gewaehlt": len(texts) - 1,
        },
    )


async def stop_request(redis: aioredis.Redis, pair: Pair) -> dict[str, Any] | None:
    """The pending stop request of the pair (`{turn_id, art}`), if any."""
    raw = await redis.get(keys.turn_stop(pair))
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


async def forget_unanswered(
    redis: aioredis.Redis, delivery: Delivery, pair: Pair, turn_id: str, message_ids: list[str]
) -> None:
    """After a run was ended because its message was taken back: the person's session item
    and the short-term entries Path 1 wrote for the turn go, and every client is told."""
    await turn_records.remove_session_turns(redis, pair, turn_id, (ROLE_USER, ROLE_ASSISTANT))
    await _forget_short_term(redis, pair, turn_id, (OBSERVER_USER, OBSERVER_ASSISTANT))
    await redis.delete(keys.turn_stop(pair))
    await delivery.send(pair.user_id, _removed_message(pair, REMOVED_BEFORE, turn_id, message_ids))


async def _forget_short_term(
    redis: aioredis.Redis, pair: Pair, turn_id: str, observers: tuple[str, ...]
) -> int:
    store = ShortTermStore(redis, cache_vectors=False)
    gone = 0
    for observer in observers:
        for key in await store.keys_of_turn(pair, turn_id, observer):
            gone += int(await store.delete(pair, key))
    return gone


def _removed_message(pair: Pair, kind: str, turn_id: str | None, ids: list[str]) -> dict[str, Any]:
    return {
        "typ": MSG_TURN_REMOVED,
        "character_id": pair.character_id,
        "art": kind,
        "turn_id": turn_id,
        FIELD_MESSAGE_IDS: ids,
    }


LATE_ROWS: Final = 3.0
"""History rows are written in batches, at most a second (plus one retry) after the turn
ended: a row to delete or change that has not arrived yet is waited for this long."""

LATE_POLL: Final = 0.1


async def _until_done(step: Callable[[], Awaitable[int]]) -> int:
    """Run `step` (rows touched) until it touched one, at most `LATE_ROWS` s."""
    deadline = time.monotonic() + LATE_ROWS
    while True:
        done = await step()
        if done or time.monotonic() >= deadline:
            return done
        await asyncio.sleep(LATE_POLL)


class TurnControls:
    """The message controls of one process (API): Redis, PostgreSQL, delivery."""

    def __init__(
        self, redis: aioredis.Redis, pool: AsyncConnectionPool, delivery: Delivery | None = None
    ) -> None:
        self.redis = redis
        self.pool = pool
        self.delivery = delivery or Delivery(redis)
        self.outcomes = Outcomes(redis, self.delivery, FailedTurnLog(pool))

    # -- the last exchange -------------------------------------------------------------------

    async def busy(self, pair: Pair) -> bool:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.exists(keys.turn_marker(pair))
            pipe.llen(keys.prompt_queue(pair))
            pipe.llen(keys.event_queue(pair))
            marker, queued, events = await pipe.execute()
        return bool(marker or queued or events)

    async def last_exchange(self, pair: Pair) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """(the person's turn, Nova's answer) when the session ends with an answered user
        turn, else None."""
        turns = await turn_records.last_turns(self.redis, pair, 2)
        if len(turns) < 2:
            return None
        user, answer = turns
        turn_id = answer.get("turn_id")
        if (
            answer.get("rolle") != ROLE_ASSISTANT
            or user.get("rolle") != ROLE_USER
            or not turn_id
            or user.get("turn_id") != turn_id
        ):
            return None
        return user, answer

    async def last_user_text(self, pair: Pair) -> tuple[str, str] | None:
        """(turn id, text) of the person's last turn when Nova answered it last."""
        exchange = await self.last_exchange(pair)
        if exchange is None:
            return None
        user, _ = exchange
        return str(user["turn_id"]), str(user.get("inhalt") or "")

    # -- regenerate and alternatives -------------------------------------------------------

    async def variants(self, pair: Pair) -> Variants | None:
        raw = await self.redis.get(keys.answer_variants(pair))
        if not raw:
            return None
        data = json.loads(raw)
        return Variants(
            turn_id=str(data["turn_id"]),
            texts=[str(t) for t in data["texte"]],
            chosen=data.get("gewaehlt"),
            template=dict(data.get("vorlage") or {}),
        )

    async def _save_variants(self, pair: Pair, variants: Variants) -> None:
        body = {**variants.wire(), "vorlage": variants.template}
        await self.redis.set(keys.answer_variants(pair), json.dumps(body), ex=keys.SESSION_TTL)
        await self.delivery.send(
            pair.user_id,
            {"typ": MSG_VARIANTS, "character_id": pair.character_id, **variants.wire()},
        )

    async def current_variants(self, pair: Pair) -> Variants | None:
        """The last turn's alternatives as a client shows them (the session's answer as the
        newest when it is not among the kept ones yet); None when the last answer has none."""
        exchange = await self.last_exchange(pair)
        kept = await self.variants(pair)
        if exchange is None or kept is None or kept.turn_id != exchange[1]["turn_id"]:
            return None
        if kept.chosen is None:
            texts = [*kept.texts, str(exchange[1].get("inhalt") or "")]
            return Variants(kept.turn_id, texts, len(texts) - 1, kept.template)
        return kept

    async def _post_run(self, pair: Pair) -> None:
        """Wait (at most `POST_RUN_WAIT` s) while a run still holds the pair after its
        answer left (the post-run stores it; the turn has its outcome): a correction must
        come after everything the run writes, or the run would write it back."""
        deadline = time.monotonic() + POST_RUN_WAIT
        while time.monotonic() < deadline:
            marker = await self.redis.get(keys.turn_marker(pair))
            if not marker:
                return
            running = str(marker).split("@", 1)[0]
            runs = [outcome_key(pair.user_id, running, n) for n in range(MAX_SELF_TRIGGERS + 1)]
            if not await self.redis.exists(*runs):
                return  # no answer yet: the run is not in its post-run
            await asyncio.sleep(POST_RUN_POLL)

    async def regenerate(self, pair: Pair, turn_id: str | None = None) -> Regenerating:
        """Start a new answer to the last turn (see the module docstring)."""
        await self._post_run(pair)
        if await self.busy(pair):
            raise TurnControlError(409, "turn_laeuft", "a turn of this pair is running")
        exchange = await self.last_exchange(pair)
        if exchange is None:
            raise TurnControlError(409, "nichts_zu_erneuern", "the last turn has no answer")
        user, answer = exchange
        last = str(answer["turn_id"])
        if turn_id is not None and turn_id != last:
            raise TurnControlError(409, "nicht_die_letzte", "only the last answer is renewed")
        record = await self._turn_event(pair, last)
        kept = await self.variants(pair)
        current = str(answer.get("inhalt") or "")
        if kept is None or kept.turn_id != last:
            texts = [current]
        elif kept.chosen is None:
            texts = [*kept.texts, current]
        else:
            texts = kept.texts
        if len(texts) >= MAX_VARIANTS:
            raise TurnControlError(409, "zu_viele_varianten", f"at most {MAX_VARIANTS} answers")
        template = {k: v for k, v in answer.items() if k != "embedding"}
        await self._drop_answer(pair, last)
        await self._save_variants(pair, Variants(last, texts, None, template))
        payload = dict(record["payload"])
        payload.pop(FIELD_PATH1_TAIL, None)
        payload[FIELD_HUMAN_SALIENCE] = None
        payload[FIELD_USER_INTENTIONS] = list(user.get("intentionen") or [])
        payload[FIELD_REGENERATED] = len(texts)
        payload[FIELD_TURN_ID] = last
        # every run of the turn (a thinker retry counts on) may answer again
        await self.redis.delete(
            *(outcome_key(pair.user_id, last, n) for n in range(MAX_SELF_TRIGGERS + 1))
        )
        event = build_event(
            user_id=pair.user_id,
            character_id=pair.character_id,
            source=SOURCE_USER,
            typ=KIND_MESSAGE,
            payload=payload,
        )
        await push_event(self.redis, event)
        log.info("turn %s of %s: regenerate %d queued", last, pair, len(texts) + 1)
        return Regenerating(last, [str(i) for i in payload[FIELD_MESSAGE_IDS]], texts)

    async def _turn_event(self, pair: Pair, turn_id: str) -> dict[str, Any]:
        raw = await self.redis.get(keys.turn_event(pair))
        record = json.loads(raw) if raw else None
        if not isinstance(record, dict) or record.get("turn_id") != turn_id:
            raise TurnControlError(
                409, "nicht_erneuerbar", "the turn's run can no longer be repeated"
            )
        if record.get("agent_handelte"):
            raise TurnControlError(
                409, "agent_handelte", "a task agent acted in this turn; it would act twice"
            )
        return record

    async def _drop_answer(self, pair: Pair, turn_id: str) -> None:
        """Remove what the answer of `turn_id` left: its session item, its archive row and
        Nova's short-term entries of the turn. The history row stays until the new answer's
        row replaces it (the newest row of a turn is the one shown), so a regenerate that
        fails leaves the turn as it was."""
        await turn_records.remove_session_turns(self.redis, pair, turn_id, (ROLE_ASSISTANT,))
        await turn_records.delete_archive(self.pool, pair, turn_id, (SPEAKER_CHARACTER,))
        await _forget_short_term(self.redis, pair, turn_id, (OBSERVER_ASSISTANT,))

    async def choose(self, pair: Pair, turn_id: str, index: int) -> Variants:
        """Make alternative `index` the answer of the last turn."""
        await self._post_run(pair)
        if await self.busy(pair):
            raise TurnControlError(409, "turn_laeuft", "a turn of this pair is running")
        shown = await self.current_variants(pair)
        if shown is None or shown.turn_id != turn_id:
            raise TurnControlError(404, "turn_unbekannt", "no alternatives for this turn")
        if not 0 <= index < len(shown.texts):
            raise TurnControlError(422, "variante_unbekannt", f"no alternative {index}")
        text = shown.texts[index]
        if not await turn_records.replace_session_text(
            self.redis, pair, turn_id, ROLE_ASSISTANT, text
        ):
            raise TurnControlError(409, "turn_laeuft", "the answer changed meanwhile")
        await _until_done(lambda: turn_records.set_history_answer(self.pool, pair, turn_id, text))
        # the archive keeps texts unchanged and Nova's short-term entries were about the
        # other answer: both go rather than disagree with the chosen one
        await turn_records.delete_archive(self.pool, pair, turn_id, (SPEAKER_CHARACTER,))
        await _forget_short_term(self.redis, pair, turn_id, (OBSERVER_ASSISTANT,))
        chosen = Variants(turn_id, shown.texts, index, shown.template)
        await self._save_variants(pair, chosen)
        return chosen

    # -- take back, stop ---------------------------------------------------------------------

    async def remove(self, pair: Pair, message_id: str) -> Removal:
        """Take the person's last message back (see the module docstring). `message_id` may
        also be the turn id of the last turn (a page that loaded it from the history knows
        no message ids)."""
        queued = await self._withdraw_queued(pair, message_id)
        if queued is not None:
            return queued
        await self._post_run(pair)
        turns = await turn_records.last_turns(self.redis, pair, 2)
        owner = next(
            (
                t
                for t in reversed(turns)
                if t.get("rolle") == ROLE_USER
                and (
                    message_id in (t.get(FIELD_MESSAGE_IDS) or []) or t.get("turn_id") == message_id
                )
            ),
            None,
        )
        marker = await self.redis.get(keys.turn_marker(pair))
        running = str(marker).split("@", 1)[0] if marker else None
        if owner is not None and owner.get("rolle") == ROLE_USER:
            turn_id = str(owner["turn_id"])
            answered = turns[-1].get("rolle") == ROLE_ASSISTANT and turns[-1].get("turn_id") == (
                turn_id
            )
            if turn_id != running and (answered or turns[-1] is owner):
                return await self._delete_answered(pair, turn_id, owner)
        if running is not None and (owner is None or owner.get("turn_id") == running):
            await self.redis.set(
                keys.turn_stop(pair),
                json.dumps({"turn_id": running, "art": STOP_WITHDRAWN}),
                ex=keys.TURN_STOP_TTL,
            )
            return Removal(REMOVED_PENDING, running, [message_id])
        if owner is not None:
            raise TurnControlError(409, "nicht_die_letzte", "only the last message is taken back")
        raise TurnControlError(404, "nachricht_unbekannt", "no such message of this pair")

    async def _withdraw_queued(self, pair: Pair, message_id: str) -> Removal | None:
        queue = keys.prompt_queue(pair)
        for raw in await self.redis.lrange(queue, 0, -1):
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if (
                isinstance(entry, dict)
                and entry.get("nachrichten_id") == message_id
                and int(await self.redis.lrem(queue, 1, str(raw))) == 1
            ):
                await self.delivery.send(
                    pair.user_id, _removed_message(pair, REMOVED_BEFORE, None, [message_id])
                )
                return Removal(REMOVED_BEFORE, None, [message_id])
        return None

    async def _delete_answered(self, pair: Pair, turn_id: str, user: dict[str, Any]) -> Removal:
        """The last exchange leaves: session, history, archive, short-term entries of both
        sides, the kept alternatives."""
        ids = [str(i) for i in user.get(FIELD_MESSAGE_IDS) or []]
        await turn_records.remove_session_turns(
            self.redis, pair, turn_id, (ROLE_USER, ROLE_ASSISTANT)
        )
        await _until_done(lambda: turn_records.delete_history(self.pool, pair, turn_id))
        await turn_records.delete_archive(
            self.pool, pair, turn_id, (SPEAKER_USER, SPEAKER_CHARACTER)
        )
        await _forget_short_term(self.redis, pair, turn_id, (OBSERVER_USER, OBSERVER_ASSISTANT))
        kept = await self.variants(pair)
        if kept is not None and kept.turn_id == turn_id:
            await self.redis.delete(keys.answer_variants(pair))
        await self.delivery.send(pair.user_id, _removed_message(pair, REMOVED_AFTER, turn_id, ids))
        return Removal(REMOVED_AFTER, turn_id, ids)

    async def stop(self, pair: Pair) -> str:
        """End the running turn before its answer leaves; what was stopped: the turn id, or
        `warteschlange` when only queued messages were (they end `gestoppt` at once)."""
        marker = await self.redis.get(keys.turn_marker(pair))
        if marker:
            turn_id = str(marker).split("@", 1)[0]
            await self.redis.set(
                keys.turn_stop(pair),
                json.dumps({"turn_id": turn_id, "art": STOP_STOPPED}),
                ex=keys.TURN_STOP_TTL,
            )
            return turn_id
        queue = keys.prompt_queue(pair)
        ids: list[str] = []
        prompts: list[str] = []
        for raw in await self.redis.lrange(queue, 0, -1):
            if int(await self.redis.lrem(queue, 1, str(raw))) != 1:
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            ids.append(str(entry.get("nachrichten_id")))
            prompts.append(str(entry.get("prompt") or ""))
        if not ids:
            raise TurnControlError(409, "kein_turn", "nothing is running")
        await self.outcomes.fail(
            pair.user_id, pair.character_id, new_id(), 0, ids, STOPPED, prompts
        )
        return "warteschlange"
