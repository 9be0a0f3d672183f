"""The prompt consumer: cut a block, run Path 1 once for it, hand the turn on.

Per pair (docs/behaviour/events.md#prompt-consumer): when the pair is idle (no turn marker,
no event waiting) and a model-gate slot can be taken *right now*, the marker is set and the
front group of utterances (each ≤ 30 s after its predecessor) is cut — no quiet window, no
waiting. While the gate is busy the utterances simply stay queued, so what arrives meanwhile
joins the block. The HumanGraph perceives the block as one prompt in that slot. As soon as
it has stored the user's session turn (`HUMAN_EVENT_NODE`) the slot is freed, the utterance
goes to the user's other clients and the `message` event with a new turn_id and all
nachrichten_ids is enqueued; the HumanGraph's tail (salience, condensing, summary) runs on
meanwhile and hands its salience to the CharacterGraph through `pfad1_nachlauf`. The marker
stays set: the event consumer takes it over and deletes it after the CharacterGraph; the tail
never touches it.

A block may carry the ids of a superseded run (the user wrote on before its
answer left, events/event_consumer.py): the HumanGraph perceives only the new
utterances (the earlier ones are already in the session), but the event — and
any failure report — names the carried ids first, then the block's own.

Through a Redis outage: stage messages, marker refreshes, the utterance broadcast, the
hand-on of the event and a failure report are retried until Redis is back
(store/retry.py); a HumanGraph node that needs Redis while it is gone marks Path 1 as
failed (`pfad1_ausfall`), and the turn goes on to its answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from novaberg.events.consumer_base import Offer, PairConsumer
from novaberg.events.model import (
    Event,
    EventRejected,
    QueuedUtterance,
    StageMessage,
    UtteranceMessage,
    build_event,
    new_id,
    stage_label,
)
from novaberg.events.outcomes import reason_for
from novaberg.events.queues import Claimed
from novaberg.graph.contract import HumanTurn
from novaberg.llm.gate import Priority
from novaberg.llm.layer import model_turn
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.retry import until_redis_back
from novaberg.wire import GRAPH_HUMAN, KIND_MESSAGE, SOURCE_USER

log = logging.getLogger(__name__)

LAST_ACTIVITY_TTL = 7_200
"""`last_activity:{u}` lives 2 h."""


def block_turn(pair: Pair, entry: Claimed) -> tuple[HumanTurn, list[QueuedUtterance]]:
    """The HumanTurn for a cut block; the utterances are joined with newlines. It also
    carries the ids and the count of the runs superseded before it, and when the block's
    last utterance arrived (the supersede rule measures its window from there)."""
    items = [QueuedUtterance.model_validate_json(raw) for raw in entry.data["items"]]
    turn = HumanTurn(
        pair=pair,
        turn_id=str(entry.data["turn_id"]),
        prompt="\n".join(item.text for item in items),
        message_ids=[item.message_id for item in items],
        received_at=items[0].received_at,
        carried_ids=list(entry.carried),
        last_received_at=items[-1].received_at,
        superseded_runs=entry.carried_rounds,
    )
    return turn, items


def _failure_text(exc: BaseException, last_node: str) -> str:
    return reason_for(exc, f"nach {last_node}")


class _Path1:
    """One block's HumanGraph run as the prompt consumer drives it.

    Until the hand-over (`on_event`, right after the user's turn is stored) the run keeps
    the turn marker fresh and holds the model-gate slot. At the hand-over the slot is freed
    (the CharacterGraph takes its own), the utterance goes to the other clients and the
    event is enqueued together with handing the marker on — from then on the marker belongs
    to the event consumer, so the tail (salience, condensing, summary) never refreshes it.
    A failure before the hand-over still sends the event, marked `pfad1_ausfall`."""

    def __init__(
        self,
        consumer: PromptConsumer,
        pair: Pair,
        entry: Claimed,
        turn: HumanTurn,
        items: list[QueuedUtterance],
        slot: str,
    ) -> None:
        self.consumer = consumer
        self.pair = pair
        self.entry = entry
        self.turn = turn
        self.items = items
        self.slot: str | None = slot
        self.handed_on = False
        self.event_failed = False

    async def free_slot(self) -> None:
        if self.slot is not None:
            slot, self.slot = self.slot, None
            await self.consumer.gate.release(slot)

    async def on_node(self, node: str, after: dict[str, Any]) -> None:
        if not self.handed_on:
            await self.consumer.queues.refresh_marker(self.pair, self.turn.turn_id)
        await self.consumer._send_stage(
            self.pair.user_id,
            StageMessage(
                character_id=self.pair.character_id,
                turn_id=self.turn.turn_id,
                node=node,
                label=stage_label(node),
                graph=GRAPH_HUMAN,
            ),
        )

    async def on_event(self, state: dict[str, Any] | None, failure: str | None) -> None:
        await self.free_slot()
        self.event_failed = True  # until the event is enqueued
        consumer = self.consumer
        await consumer._broadcast(self.turn, self.items)
        event = consumer._event(self.turn, state, failure)
        await consumer.queues.finish(self.pair, self.entry, release_marker=False, push=event)
        self.event_failed = False
        self.handed_on = True


def block_message_ids(entry: Claimed) -> list[str]:
    """Best-effort ids of a block (carried ids first), also when an item is unreadable
    (for failure reports)."""
    ids: list[str] = list(entry.carried)
    for raw in entry.data.get("items", []):
        try:
            ids.append(str(json.loads(raw)["nachrichten_id"]))
        except (ValueError, KeyError, TypeError):
            continue
    return ids


def block_prompts(entry: Claimed) -> list[str]:
    """Best-effort texts of a block's readable items (for a failure kept in the history)."""
    prompts: list[str] = []
    for raw in entry.data.get("items", []):
        try:
            prompts.append(QueuedUtterance.model_validate_json(raw).text)
        except ValueError:
            continue
    return prompts


class PromptConsumer(PairConsumer):
    label = "prompt consumer"

    async def offer(self, pair: Pair) -> Offer:
        """Start a turn for the pair if it can start one now.

        The model gate is tried *before* the block is cut, without waiting: while no slot is
        free the utterances stay queued — and whatever arrives meanwhile joins the block —
        instead of a cut block waiting for a slot."""
        if pair in self._running:
            return Offer.LATER
        if not await self.queues.ready(pair):
            return Offer.NOTHING
        slot = f"{self.worker_id}:{new_id()}"
        if not await self.gate.try_acquire(slot, Priority.USER):
            await self.gate.mark_user_waiting()
            return Offer.LATER
        try:
            entry = await self.queues.begin_turn(pair, new_id())
        except BaseException:
            await self.gate.release(slot)
            raise
        if entry is None:  # another worker was faster
            await self.gate.release(slot)
            return Offer.NOTHING
        task = asyncio.create_task(self._turn(pair, entry, slot), name=f"path1:{pair}")
        self._start(pair, entry, task)
        return Offer.STARTED

    async def drain(self) -> None:
        """Wait for the turns this consumer started (shutdown, tests)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)

    async def _turn(self, pair: Pair, entry: Claimed, slot: str) -> None:
        """Path 1 for one cut block; `slot` is the gate slot taken for it (released here)."""
        turn_id = str(entry.data["turn_id"])
        try:
            turn, items = block_turn(pair, entry)
        except Exception as exc:
            await self.gate.release(slot)
            log.error("unreadable block for %s: %s", pair, exc)
            await self._fail(pair, entry, block_message_ids(entry), reason_for(exc, "eingang"))
            return
        ids = turn.answered_ids
        log.info(
            "turn %s for %s: block of %d utterance(s)%s",
            turn_id,
            pair,
            len(items),
            f", carrying {len(entry.carried)} id(s) of a superseded run" if entry.carried else "",
        )
        run = _Path1(self, pair, entry, turn, items, slot)
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.set(
                    keys.last_activity(turn.pair.user_id), turn.received_at, ex=LAST_ACTIVITY_TTL
                )
                pipe.delete(keys.impulse_burst(turn.pair))  # the user answered: burst over
                await pipe.execute()
            async with model_turn():  # the whole run on one model connection
                await self.graphs.run_human(turn, run.on_node, run.on_event, _failure_text)
        except Exception as exc:
            if run.handed_on:  # the event left; the tail's own failure costs nothing more
                log.exception("turn %s: path 1 tail failed after the hand-over", turn_id)
            elif run.event_failed:
                log.exception("turn %s: could not hand on its event", turn_id)
                await self._fail(pair, entry, ids, reason_for(exc, "ereignis"))
            else:
                log.exception("path 1 of turn %s crashed outside the graph", turn_id)
                await self._fail(pair, entry, ids, reason_for(exc, "pfad 1"))
        finally:
            await run.free_slot()

    async def _send_stage(self, user_id: str, stage: StageMessage) -> None:
        await until_redis_back(
            lambda: self.delivery.send(user_id, stage), f"stage {stage.node} of {stage.turn_id}"
        )

    async def _broadcast(self, turn: HumanTurn, items: list[QueuedUtterance]) -> None:
        """The utterance to the user's other clients, after Path 1 and before the event, so
        the answer cannot overtake it. Sending is one non-blocking Redis
        call; the hub's per-connection writers keep slow sockets off this loop. Retried
        through a Redis outage (a reply lost after the send got through shows the
        utterance twice; the outcome is never doubled)."""
        message = UtteranceMessage(
            character_id=turn.pair.character_id,
            turn_id=turn.turn_id,
            nachrichten_ids=turn.message_ids,
            aeusserungen=[item.model_dump(by_alias=True) for item in items],
            client_ids=sorted({i.client_id for i in items if i.client_id}),
        )
        await until_redis_back(
            lambda: self.delivery.send(turn.pair.user_id, message),
            f"utterance broadcast of {turn.turn_id}",
        )

    def _event(self, turn: HumanTurn, final: dict[str, Any] | None, failure: str | None) -> Event:
        """The `message` event, its payload as the graph built it (complete)."""
        try:
            return build_event(
                user_id=turn.pair.user_id,
                character_id=turn.pair.character_id,
                source=SOURCE_USER,
                typ=KIND_MESSAGE,
                payload=self.graphs.human_event_payload(turn, final, failure),
                trigger_count=0,
            )
        except EventRejected as exc:
            raise ValueError(f"the HumanGraph's event payload broke a rule: {exc}") from None

    async def _fail(self, pair: Pair, entry: Claimed, ids: list[str], reason: str) -> None:
        """Report the turn and free the pair (both retried through a Redis outage). If Redis
        stays away longer, the entry stays in the processing list and this worker's
        housekeeping ends it once Redis is back."""
        try:
            await self.outcomes.fail(
                pair.user_id,
                pair.character_id,
                str(entry.data["turn_id"]),
                0,
                ids,
                reason,
                block_prompts(entry),
            )
            await self.queues.finish(pair, entry, release_marker=True)
        except Exception:
            log.exception("could not report the failure of turn %s", entry.data.get("turn_id"))
