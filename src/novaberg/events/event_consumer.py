"""The event consumer: run the CharacterGraph for each event and deliver the answer.

Per claimed event (docs/behaviour/events.md#event-consumer): take the model gate without
blocking the loop, build the state from the event (`event_source`, `event_payload`), stream
the graph and send `character_stage` per node, send `character_response` the moment the
answer is decided and `perception_assistant` has perceived exactly its text
(`contract.release_ready`; a corrected draft's speculative perception never leaves), let
the post-run finish, then — atomically — enqueue a
self-trigger (if any, capped at 3) and delete the marker. Every run ends in exactly one
outcome (a superseded run hands its ids on to the next); a failure after the answer left
costs nothing but a log line. An event of a character its user has paused is not run but
held until the character is activated (events/activation.py).

Supersede before release (docs/behaviour/events.md#supersede: the character answers the
whole picture). The prompt consumer never waits for a quiet moment, so the first of three
quick messages starts a turn alone. While that user turn's CharacterGraph runs and its
answer has not left, the consumer checks after every node whether the user wrote on within
the block window; if so, the run is abandoned — nothing released, the post-run never runs —
and its nachrichten_ids are carried into the next block (queues.TurnQueues.supersede), whose
one answer names them all. A self-event yields the same way to anything the person wrote in
the meantime (it names no ids to carry). Never superseded: impulses and the thinker's retry, a
run in which a task agent acted (its action must not be thrown away), a run whose Path 1
failed (its words are not in the session) and a run with an open agent question (the next
utterance is its answer). And never more than `MAX_SUPERSEDES` runs in a row: the next one
answers what it has, so a user who keeps writing is not left without an answer.

Through a Redis outage the run waits instead of failing where it can: stage messages,
marker refreshes, the supersede check, the outcome, the gate release and the final
step are retried until Redis is back (store/retry.py); a node that needs Redis while
it is gone fails the run, whose failure is then sent the same way.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from novaberg.events.consumer_base import Offer, PairConsumer
from novaberg.events.model import (
    MAX_SELF_TRIGGERS,
    MAX_SUPERSEDES,
    SUPERSEDED_STAGE,
    Event,
    EventRejected,
    StageMessage,
    build_event,
    is_self_event,
    new_id,
    parse_event,
    stage_label,
)
from novaberg.events.outcomes import BAD_EVENT, NO_ANSWER, STOPPED, WITHDRAWN, reason_for
from novaberg.events.queues import Claimed, Supersede
from novaberg.events.turn_controls import (
    STOP_WITHDRAWN,
    forget_unanswered,
    mark_agent_acted,
    record_turn_event,
    restore_after_failed_regenerate,
    stop_request,
)
from novaberg.graph.contract import AGENT_NODE, CharacterTurn, release_ready
from novaberg.llm.errors import GateTimeout
from novaberg.llm.layer import model_turn
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.retry import until_redis_back
from novaberg.wire import (
    FIELD_COMMITMENT,
    FIELD_INTENT,
    FIELD_LAST_RECEIVED,
    FIELD_MESSAGE_IDS,
    FIELD_PATH1_FAILURE,
    FIELD_RECEIVED_AT,
    FIELD_REGENERATED,
    FIELD_SUPERSEDED,
    FIELD_TRIGGER_TURN_ID,
    FIELD_TURN_ID,
    FIELD_USER_PROMPT,
    GRAPH_CHARACTER,
    KIND_CONTINUE,
    KIND_MESSAGE,
    SOURCE_CHARACTER,
    SOURCE_USER,
)

if TYPE_CHECKING:
    from novaberg.events.activation import PauseGuard

log = logging.getLogger(__name__)

EVENT_SEEN_TTL = 86_400
"""How long a handled event id suppresses a duplicate delivery of the same event."""

MEASURED_STATE_FIELDS = (
    "nachricht",
    "turn_id",
    "nachrichten_ids",
    "emotion",
    "arousal",
    "emotions_vektor",
    "nova_emotions_verlauf",
    "tribunal_verdict",
)
"""Eight `character_response` fields whose emptiness is logged by name
(docs/behaviour/events.md#release), measured on the payload as sent, not on its carrier
objects. Model, token count, origin and the user's emotion values stay unmeasured.
`nachrichten_ids` is legitimately empty for a run the character started itself (impulse,
self-trigger)."""


@dataclass(frozen=True)
class RunEnd:
    """How a run ended: the self-trigger to enqueue, or abandoned for newer utterances."""

    follow_up: Event | None = None
    superseded: bool = False


ANY_UTTERANCE: Final = 1e300
"""The window start of a self-event: every waiting utterance lies within the block window
after it, so whatever the person wrote in the meantime supersedes Nova's second message."""


def supersede_window_start(event: Event) -> float | None:
    """When the running turn's last utterance arrived, if the run may be superseded at
    all (see the module docstring); None = never. A self-event yields to any utterance
    (`ANY_UTTERANCE`): the person wrote before Nova's second message, so that is what she
    answers."""
    if event.is_self_event:
        return ANY_UTTERANCE
    if (
        event.source != SOURCE_USER
        or event.kind != KIND_MESSAGE
        or event.payload.get(FIELD_PATH1_FAILURE)
        or event.payload.get(FIELD_REGENERATED)  # nothing new was said: nothing to join
    ):
        return None
    if superseded_before(event) >= MAX_SUPERSEDES:
        return None  # the user keeps writing: this run answers what it has
    for field in (FIELD_LAST_RECEIVED, FIELD_RECEIVED_AT):
        value = event.payload.get(field)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def superseded_before(event: Event) -> int:
    """How many runs in a row were given up before this one (their ids ride along)."""
    value = event.payload.get(FIELD_SUPERSEDED)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0


def empty_fields(payload: dict[str, Any]) -> list[str]:
    """Names of the measured fields that are absent, None, '' or empty containers."""
    empty = []
    for name in MEASURED_STATE_FIELDS:
        value = payload.get(name)
        if value is None or (isinstance(value, str | list | dict) and len(value) == 0):
            empty.append(name)
    return empty


class EventConsumer(PairConsumer):
    label = "event consumer"

    pauses: PauseGuard | None = None
    """Holds the events of characters their user paused (set by the worker; None: no
    character is ever paused, e.g. graphs without a database)."""

    async def offer(self, pair: Pair) -> Offer:
        """Claim the pair's next runnable event and start its run, if it has one."""
        if pair in self._running:
            return Offer.LATER
        entry = await self.queues.claim_event(pair)
        if entry is None:
            return Offer.NOTHING
        task = asyncio.create_task(self._handle(pair, entry), name=f"path2:{pair}")
        self._start(pair, entry, task)
        return Offer.STARTED

    async def drain(self) -> None:
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)

    # -- one event -----------------------------------------------------------------------------

    async def _handle(self, pair: Pair, entry: Claimed) -> None:
        end = RunEnd()
        cancelled = held = False
        try:
            try:
                event = parse_event(entry.data["raw"])
            except EventRejected as exc:
                await self._reject(pair, entry, str(exc))
                return
            if self.pauses is not None and await self.pauses.hold_if_paused(pair, entry):
                held = True  # (before it counts as handled: it runs once taken up)
                return
            if not await self._first_run(event):
                log.warning("duplicate event %s for %s suppressed", event.event_id, pair)
                return
            end = await self._run(pair, event, entry)
        except Exception as exc:  # never leave a turn silent
            log.exception("event run for %s crashed", pair)
            try:
                await self._fail_raw(pair, entry, reason_for(exc, "ereignis"))
            except Exception:  # Redis gone too long: the entry stays for housekeeping
                log.exception("could not report the crashed run for %s", pair)
        except asyncio.CancelledError:
            # cut off at shutdown: the entry stays in the processing list, and the
            # stopping worker ends it in an outcome (kept answer or turn_gescheitert)
            cancelled = True
            raise
        finally:
            if not (end.superseded or cancelled or held):  # superseded, held: already moved
                try:
                    await self.queues.finish(pair, entry, release_marker=True, push=end.follow_up)
                except Exception:  # the entry stays in the processing list for recovery
                    log.exception("could not finish the event run for %s", pair)

    async def _first_run(self, event: Event) -> bool:
        """Mark the event as handled; False if it was handled before (a duplicate). Safe to
        retry: a mark our own lost reply had set is recognised by its token."""
        key = keys.event_seen(event.event_id)
        token = f"{self.worker_id}:{new_id()}"

        async def mark() -> bool:
            if await self.redis.set(key, token, nx=True, ex=EVENT_SEEN_TTL):
                return True
            return bool(await self.redis.get(key) == token)

        return await until_redis_back(mark, f"start of event {event.event_id}")

    async def _run(self, pair: Pair, event: Event, entry: Claimed) -> RunEnd:
        """Run the CharacterGraph for `event` (see the module docstring)."""
        try:
            token = await self.gate.acquire(token=f"{self.worker_id}:{new_id()}")
        except GateTimeout as exc:
            await self._fail(event, reason_for(exc))
            return RunEnd()
        released = False
        final: dict[str, Any] | None = None
        last_node = "start"
        window_start = supersede_window_start(event)
        stoppable = True
        if event.source == SOURCE_USER and event.kind == KIND_MESSAGE:
            await record_turn_event(
                self.redis, pair, event.turn_id, dict(event.payload), event.trigger_count
            )
        try:
            state = self.graphs.character_state(
                CharacterTurn(
                    pair=pair,
                    turn_id=event.turn_id,
                    event_source=event.source,
                    event_payload=dict(event.payload),
                    trigger_count=event.trigger_count,
                )
            )
            stream = self.graphs.stream_character(state)
            try:
                async with model_turn():  # the whole run on one model connection
                    async for node, after in stream:
                        final, last_node = after, node
                        await self._stage(event, node)
                        if node == AGENT_NODE or after.get("agent_results"):
                            window_start = None  # an agent acted: this run must finish
                            if stoppable and event.source == SOURCE_USER:
                                await mark_agent_acted(self.redis, pair, event.turn_id)
                            stoppable = False
                        elif stoppable and not released and await self._stopped(pair, event):
                            return RunEnd()  # (the stream closes below; nothing persisted)
                        if released or window_start is None:
                            await self.queues.refresh_marker(pair, entry.marker)
                        elif await self._supersede(pair, event, entry, window_start, node):
                            return RunEnd(superseded=True)  # (the check refreshed the marker)
                        if not released and release_ready(after):
                            released = await self._release(event, after)
            finally:
                await _close(stream)
        except Exception as exc:
            if released:
                log.exception(
                    "post-run of turn %s failed after the answer left (at %s); answer kept",
                    event.turn_id,
                    last_node,
                )
            else:
                await self._fail(event, reason_for(exc, f"nach {last_node}"))
                return RunEnd()
        finally:
            await self.gate.release(token)
        if not released:
            await self._fail(event, f"{NO_ANSWER} (letzter Knoten {last_node})")
            return RunEnd()
        return RunEnd(follow_up=await self._self_trigger(pair, event, final or {}))

    async def _supersede(
        self, pair: Pair, event: Event, entry: Claimed, window_start: float, node: str
    ) -> bool:
        """Abandon this unreleased run if the user wrote on; True if it was abandoned."""
        stage = StageMessage(
            character_id=event.character_id,
            turn_id=event.turn_id,
            node=SUPERSEDED_STAGE,
            label=stage_label(SUPERSEDED_STAGE),
            graph=GRAPH_CHARACTER,
        )
        # a self-event names no ids and is not a superseded answer of the person's
        rounds = 0 if event.is_self_event else superseded_before(event) + 1
        found = await self.queues.supersede(
            pair, entry, window_start, event.message_ids, stage, rounds=rounds
        )
        if found is Supersede.KEPT:
            return False
        if found is Supersede.GONE:
            log.warning(
                "turn %s of %s: its processing entry is gone (superseded by an attempt whose "
                "reply was lost, or adopted by a rescuer); the run stops",
                event.turn_id,
                pair,
            )
            return True
        log.info(
            "turn %s of %s superseded after %s: the user wrote on before the answer left; "
            "ids %s carried to the next block",
            event.turn_id,
            pair,
            node,
            event.message_ids,
        )
        return True

    async def _stopped(self, pair: Pair, event: Event) -> bool:
        """End this unreleased run if the person stopped it or took its message back
        (events/turn_controls.py); True if it ended. Its ids get their outcome here."""
        request = await until_redis_back(
            lambda: stop_request(self.redis, pair), f"stop check of {event.turn_id}"
        )
        if request is None or request.get("turn_id") != event.turn_id:
            return False
        withdrawn = request.get("art") == STOP_WITHDRAWN
        log.info("turn %s of %s ended by the person (%s)", event.turn_id, pair, request.get("art"))
        await self._fail(event, WITHDRAWN if withdrawn else STOPPED)
        if withdrawn:
            await forget_unanswered(
                self.redis, self.delivery, pair, event.turn_id, event.message_ids
            )
        else:
            await self.redis.delete(keys.turn_stop(pair))
        return True

    async def _stage(self, event: Event, node: str) -> None:
        message = StageMessage(
            character_id=event.character_id,
            turn_id=event.turn_id,
            node=node,
            label=stage_label(node),
            graph=GRAPH_CHARACTER,
        )
        await until_redis_back(
            lambda: self.delivery.send(event.user_id, message), f"stage {node} of {event.turn_id}"
        )

    async def _release(self, event: Event, state: dict[str, Any]) -> bool:
        """Send the answer as the graph built it (`TurnGraphs.response_payload`: complete,
        the event's identity included); True once the run has its outcome."""
        payload = self.graphs.response_payload(state)
        missing = empty_fields(payload)
        log.info(
            "turn %s payload: %d of %d measured fields set%s",
            event.turn_id,
            len(MEASURED_STATE_FIELDS) - len(missing),
            len(MEASURED_STATE_FIELDS),
            f"; empty: {', '.join(missing)}" if missing else "",
        )
        if not payload[FIELD_MESSAGE_IDS] and event.source == SOURCE_USER:
            log.error("turn %s: answer names no nachrichten_ids (not attributable)", event.turn_id)
        seq = await self.outcomes.respond(
            event.user_id,
            event.character_id,
            event.turn_id,
            event.trigger_count,
            event.message_ids,
            payload,
        )
        return (
            True
            if seq
            else await self.outcomes.decided(event.user_id, event.turn_id, event.trigger_count)
        )

    async def _self_trigger(self, pair: Pair, event: Event, result: dict[str, Any]) -> Event | None:
        # Log every arrival, not only success: a dead channel must be told from
        # "no trigger needed".
        log.info(
            "self-trigger in result of turn %s (%s): present=%s value=%r",
            event.turn_id,
            pair,
            "self_trigger" in result,
            result.get("self_trigger"),
        )
        if not result.get("self_trigger"):
            return None
        if event.trigger_count >= MAX_SELF_TRIGGERS:
            log.warning(
                "self-trigger dropped at the limit: trigger_count=%d limit=%d pair=%s turn=%s",
                event.trigger_count,
                MAX_SELF_TRIGGERS,
                pair,
                event.turn_id,
            )
            return None
        pending = keys.pending_agent(pair.user_id)
        if await until_redis_back(lambda: self.redis.exists(pending), "agent question check"):
            log.info("self-trigger of turn %s skipped: an agent question is open", event.turn_id)
            return None
        payload = dict(result.get("self_trigger_payload") or {})
        if is_self_event(payload):  # Nova's second message: a new turn, naming this one
            payload[FIELD_TURN_ID] = new_id()
            payload[FIELD_TRIGGER_TURN_ID] = event.turn_id
        else:
            payload[FIELD_TURN_ID] = event.turn_id  # the retry inherits the turn
        try:
            follow = build_event(
                user_id=pair.user_id,
                character_id=pair.character_id,
                source=SOURCE_CHARACTER,
                typ=KIND_CONTINUE,
                payload=payload,
                trigger_count=event.trigger_count + 1,
            )
        except EventRejected as exc:
            log.error("self-trigger of turn %s rejected: %s", event.turn_id, exc)
            return None
        log.info(
            "self-trigger of turn %s queued as %s (trigger_count %d, turn %s%s)",
            event.turn_id,
            follow.event_id,
            follow.trigger_count,
            follow.turn_id,
            "".join(
                f", {field} {payload[field]}"
                for field in (FIELD_INTENT, FIELD_COMMITMENT)
                if field in payload
            ),
        )
        return follow

    # -- failures -------------------------------------------------------------------------------

    async def _fail(self, event: Event, reason: str) -> None:
        regenerated = bool(event.payload.get(FIELD_REGENERATED))
        await self.outcomes.fail(
            event.user_id,
            event.character_id,
            event.turn_id,
            event.trigger_count,
            event.message_ids,
            reason,
            event_prompts(event.payload),
            kept=not regenerated,
        )
        if regenerated:  # the turn keeps the answer it had (events/turn_controls.py)
            pair = Pair(event.user_id, event.character_id)
            await restore_after_failed_regenerate(self.redis, self.delivery, pair, event.turn_id)

    async def _reject(self, pair: Pair, entry: Claimed, problem: str) -> None:
        """A rule-breaking event is dropped and logged, never repaired. If it names the
        user's utterances, they still get their outcome."""
        raw = str(entry.data.get("raw", ""))
        log.error("event for %s rejected (%s): %s", pair, problem, raw[:500])
        if raw_identity(raw)[1]:
            await self._fail_raw(pair, entry, f"{BAD_EVENT}: {problem}")

    async def _fail_raw(self, pair: Pair, entry: Claimed, reason: str) -> None:
        """Fail an event we may not be able to parse: report whatever ids it names."""
        raw = str(entry.data.get("raw", ""))
        turn_id, ids, count = raw_identity(raw)
        if turn_id is None:
            return
        await self.outcomes.fail(
            pair.user_id, pair.character_id, turn_id, count, ids, reason, raw_prompts(raw)
        )


async def _close(stream: AsyncIterator[Any]) -> None:
    """Stop a graph stream now (an abandoned run must not run its next node)."""
    close = getattr(stream, "aclose", None)
    if close is None:
        return
    try:
        await close()
    except Exception:  # never hide the run's own outcome behind a cleanup error
        log.exception("closing a CharacterGraph stream failed")


def raw_identity(raw: str) -> tuple[str | None, list[str], int]:
    """turn_id, nachrichten_ids (user events only) and trigger_count of a raw event."""
    try:
        data = json.loads(raw)
        payload = data.get("payload") or {}
        turn_id = payload.get("turn_id")
        ids = payload.get(FIELD_MESSAGE_IDS) if data.get("source") == SOURCE_USER else []
        count = data.get("trigger_count", 0)
        return (
            str(turn_id) if turn_id else None,
            [str(i) for i in ids or []],
            count if isinstance(count, int) else 0,
        )
    except (ValueError, AttributeError, TypeError):
        return None, [], 0


def event_prompts(payload: dict[str, Any]) -> list[str]:
    """The user's text a user event carries (for a failure kept in the history)."""
    prompt = payload.get(FIELD_USER_PROMPT)
    return [prompt] if isinstance(prompt, str) and prompt else []


def raw_prompts(raw: str) -> list[str]:
    """`event_prompts` of a raw event that may not parse."""
    try:
        data = json.loads(raw)
        payload = data.get("payload") or {}
        return event_prompts(payload) if data.get("source") == SOURCE_USER else []
    except (ValueError, AttributeError, TypeError):
        return []
