"""Impulse delivery: when Nova says something on her own (docs/behaviour/pixie.md#delivery).

Every `DELIVERY_PERIOD` seconds, for each reachable user (a socket open, or a working
linked channel: docs/behaviour/reach.md) whose pair has a stack entry,
delivery reads a snapshot (settings, today's count, the stack, silence, momentum, turn
marker and event queue, the open agent question, the burst count, the stance hash, the
user's last emotion, mode and utterance embeddings), evaluates every gate
(impulses/gates.py) and logs the decision with every gate's value in
`impuls_protokoll` (a decision equal to the pair's previous one is logged at most once a
minute). When all gates are open:

1. the lease `impuls_laeuft:{u}:{c}` is taken (one worker per pair), and a model-gate
   slot without waiting (a user turn never waits for an impulse);
2. the AgentGraph turns the entry into Nova's own thought (memory from her side); had
   the user written meanwhile, nothing is queued (their turn goes first);
3. the impulse event is queued: `eigener_gedanke`, `reiz_herkunft: "eigener_impuls"`,
   `gedanke_arousal`, `ausloeser_turn_id`, no `user_prompt`; its event id and turn id come
   from the entry, so a repeat after a crash is the same event and the event consumer
   drops it as a duplicate: exactly one outcome per impulse;
4. only then the entry and its near-duplicates (cos ≥ 0.60) leave the stack and the burst
   count goes up.

A delivery that raises (AgentGraph or queueing) counts a failure of the entry: it waits
30 s, then 120 s, and the third failure parks it off the stack with its reason
(impulses/stack.py). A worker that dies before step 3 leaves the entry on the stack
(it is delivered later); the AgentGraph stores the thought's memory once per turn id, so
forming it again adds no second memory. One
that dies between 3 and 4 leaves the entry too: while its event waits the `turn_laeuft`
gate holds; once the event consumer handled it (`event_erledigt:{id}`), the next delivery
only clears the entry; and should it queue the event again anyway, the event consumer
drops the repeat as a duplicate. The user's next message resets the burst (events/prompt_consumer.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from psycopg.types.json import Jsonb

from novaberg.agents.deps import GraphDeps
from novaberg.agents.pending import has_pending
from novaberg.events.model import impulse_event
from novaberg.events.queues import push_event
from novaberg.graph.agent_graph import run_agent_graph
from novaberg.impulses import settings as impulse_settings
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.gates import FIRED, HELD, Decision, Gate, Snapshot, evaluate
from novaberg.impulses.stack import StackEntry
from novaberg.llm.gate import ModelGate, Priority
from novaberg.pair import Pair
from novaberg.store import character_activation, keys
from novaberg.store.lease import Leases
from novaberg.store.session import read_turns
from novaberg.wire import ROLE_USER

log = logging.getLogger(__name__)

DELIVERY_PERIOD: Final = 5.0
"""Seconds between two looks at each reachable user."""

CLAIM_SECONDS: Final = 120
"""Lease on a pair while its impulse is formed (extended while it runs)."""

REFERENCE_TURNS: Final = 5
"""The user's last utterances whose embeddings make the reference vector."""

REPEAT_LOG_SECONDS: Final = 60.0
"""An unchanged decision is logged again after this long."""

DELIVERY_ERROR: Final = "fehler"
"""`impuls_protokoll.ergebnis` when all gates were open but forming or queueing failed."""


class UserSpoke(Exception):
    """The user wrote while the thought was being formed: the impulse waits."""


def impulse_ids(entry: StackEntry) -> tuple[str, str]:
    """(event id, turn id) of the impulse an entry becomes: the same on every attempt."""
    return f"impuls-{entry.id}", f"impuls-{entry.id}"


def mean_vector(vectors: Sequence[Sequence[float]]) -> list[float] | None:
    usable = [v for v in vectors if v]
    if not usable:
        return None
    size = len(usable[0])
    usable = [v for v in usable if len(v) == size]
    return [sum(v[i] for v in usable) / len(usable) for i in range(size)]


class ImpulseDelivery:
    """Checks pairs and delivers impulses. `clock` is injectable; tests never sleep.
    `after_push` is called between queueing the event and clearing the stack, `after_thought`
    between the AgentGraph and the queueing (tests use them to stop a worker exactly
    there)."""

    def __init__(
        self,
        deps: GraphDeps,
        agent_graph: Any,
        gate: ModelGate | None = None,
        *,
        worker_id: str | None = None,
        clock: Callable[[], float] | None = None,
        after_push: Callable[[], Awaitable[None]] | None = None,
        after_thought: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.deps = deps
        self.redis = deps.redis
        self.pool = deps.pool
        self.agent_graph = agent_graph
        self.gate = gate
        self.worker_id = worker_id or uuid.uuid4().hex[:12]
        self.clock = clock or deps.clock
        self.after_push = after_push
        self.after_thought = after_thought
        self.leases = Leases(self.redis)
        self._last_logged: dict[str, tuple[str, float]] = {}

    # -- reading ----------------------------------------------------------------------------

    async def snapshot(self, pair: Pair) -> Snapshot:
        now = self.clock()
        settings = self.deps.settings
        prefs = await impulse_settings.read(
            self.pool,
            pair.user_id,
            pair.character_id,
            default_quiet=settings.quiet_hours,
            default_zone=settings.timezone,
        )
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.get(keys.last_activity(pair.user_id))
            pipe.get(keys.momentum(pair))
            pipe.exists(keys.turn_marker(pair))
            pipe.llen(keys.event_queue(pair))
            pipe.get(keys.impulse_burst(pair))
            pipe.hgetall(keys.stance(pair))
            last, momentum, running, waiting, burst, stance = await pipe.execute()
        stack = await impulse_stack.entries(self.redis, pair)
        backing_off = impulse_stack.waiting(
            stack, await impulse_stack.failures(self.redis, pair), now
        )
        turns = await read_turns(self.redis, pair)
        user_turns = [t for t in turns if t.get("rolle") == ROLE_USER]
        last_user = user_turns[-1] if user_turns else {}
        reference = mean_vector([t.get("embedding") or [] for t in user_turns[-REFERENCE_TURNS:]])
        return Snapshot(
            now=now,
            settings=prefs,
            delivered_today=await self.delivered_today(pair, now, prefs.zone),
            stack=[e for e in stack if e.id not in backing_off],
            waiting=len(backing_off),
            silence_needed=settings.impulse_silence,
            last_activity=float(last) if last is not None else None,
            momentum=str(momentum) if momentum else None,
            turn_running=bool(running),
            events_waiting=int(waiting or 0) > 0,
            pending_question=await has_pending(self.redis, pair.user_id),
            paused=await character_activation.is_paused(self.pool, pair),
            burst=int(burst or 0),
            stance={str(k): str(v) for k, v in stance.items()} or None,
            user_emotion=last_user.get("emotion"),
            user_mode=last_user.get("modus"),
            reference=reference,
        )

    async def delivered_today(self, pair: Pair, now: float, zone: Any) -> int:
        local = datetime.fromtimestamp(now, UTC).astimezone(zone)
        midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) AS n FROM impuls_protokoll WHERE user_id = %s AND character_id = %s"
                " AND ergebnis = %s AND erstellt_am >= %s AND erstellt_am < %s",
                (pair.user_id, pair.character_id, FIRED, midnight, midnight + timedelta(days=1)),
            )
            row: Any = await cur.fetchone()
        return int(row["n"]) if row else 0

    # -- one pair ---------------------------------------------------------------------------

    async def check(self, pair: Pair) -> Decision:
        """Evaluate the gates for the pair, log the decision, deliver when all are open."""
        snap = await self.snapshot(pair)
        decision = evaluate(snap)
        if not decision.fired or decision.entry is None:
            await self._log(pair, snap.now, HELD, decision)
            return decision
        return await self._deliver(pair, decision.entry, snap, decision)

    async def _held(
        self, pair: Pair, now: float, decision: Decision, why: str, result: str = HELD
    ) -> Decision:
        """All gates were open, yet nothing went out: the decision gains a closed
        `zustellung` gate naming why, so it never reads as fired."""
        held = Decision(
            [*decision.gates, Gate("zustellung", why, "frei", False)],
            None,
            decision.score,
            decision.scores,
        )
        await self._log(pair, now, result, held)
        return held

    async def _deliver(
        self, pair: Pair, entry: StackEntry, snap: Snapshot, decision: Decision
    ) -> Decision:
        claim = keys.impulse_claim(pair)
        token = await self.leases.take(claim, CLAIM_SECONDS)
        if token is None:
            return await self._held(pair, snap.now, decision, "anderer worker formt ein impuls")
        slot: str | None = None
        try:
            if self.gate is not None:
                slot = f"{self.worker_id}:impuls:{uuid.uuid4().hex[:8]}"
                if not await self.gate.try_acquire(slot, Priority.BACKGROUND):
                    slot = None
                    return await self._held(pair, snap.now, decision, "modell belegt")
            async with self.leases.held(claim, token, CLAIM_SECONDS):
                turn_id = await self._form_and_queue(pair, entry, snap.last_activity)
        except UserSpoke:
            return await self._held(pair, snap.now, decision, "nutzer hat geschrieben")
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}"
            failure = await impulse_stack.record_failure(self.redis, pair, entry, why, snap.now)
            log.exception(
                "impulse %s for %s not delivered (attempt %d); %s",
                entry.id,
                pair,
                failure.versuche,
                "parked" if failure.versuche >= impulse_stack.MAX_DELIVERY_ATTEMPTS
                else "it stays on the stack",
            )  # fmt: skip
            return await self._held(
                pair, snap.now, decision, f"{why} (versuch {failure.versuche})", DELIVERY_ERROR
            )
        finally:
            if slot is not None and self.gate is not None:
                await self.gate.release(slot)
            await self.leases.release(claim, token)
        await self._log(pair, snap.now, FIRED, decision, entry_id=entry.id, turn_id=turn_id)
        return decision

    async def _form_and_queue(
        self, pair: Pair, entry: StackEntry, seen_activity: float | None
    ) -> str:
        event_id, turn_id = impulse_ids(entry)
        event = impulse_event(
            pair.user_id,
            pair.character_id,
            entry.inhalt,
            thought_arousal=entry.arousal,
            trigger_turn_id=entry.ausloeser_turn_id,
            extra={
                "impuls_aufgabe": entry.aufgabe,
                "impuls_thema": entry.thema,
                "impuls_grund": entry.grund,
                "stapel_id": entry.id,
            },
            event_id=event_id,
            turn_id=turn_id,
        )
        if await self.redis.exists(keys.event_seen(event_id)):
            # an earlier attempt queued it and died before clearing the stack: the event
            # was handled already, so only the clearing is left to do
            log.warning("impulse %s for %s was delivered before; clearing it", entry.id, pair)
        else:
            await run_agent_graph(self.agent_graph, pair, turn_id, entry.inhalt, entry.arousal)
            if self.after_thought is not None:
                await self.after_thought()
            latest = await self.redis.get(keys.last_activity(pair.user_id))
            if latest is not None and (seen_activity is None or float(latest) > seen_activity):
                raise UserSpoke  # the user wrote while the thought formed: theirs goes first
            await push_event(self.redis, event)
            if self.after_push is not None:
                await self.after_push()
        others = await impulse_stack.entries(self.redis, pair)
        await impulse_stack.remove(self.redis, pair, impulse_stack.near_duplicates(entry, others))
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(keys.impulse_burst(pair))
            pipe.expire(keys.impulse_burst(pair), keys.IMPULSE_BURST_TTL)
            await pipe.execute()
        log.info("impulse %s (%s) queued for %s as turn %s", entry.id, entry.aufgabe, pair, turn_id)
        return turn_id

    async def _log(
        self,
        pair: Pair,
        now: float,
        result: str,
        decision: Decision,
        *,
        note: str = "",
        entry_id: str | None = None,
        turn_id: str | None = None,
    ) -> None:
        reason = note or decision.reason
        signature = json.dumps([result, reason, decision.wire()], default=str, sort_keys=True)
        previous = self._last_logged.get(str(pair))
        if (
            result == HELD
            and previous is not None
            and previous[0] == signature
            and now - previous[1] < REPEAT_LOG_SECONDS
        ):
            return
        self._last_logged[str(pair)] = (signature, now)
        log.info("impulse gates %s: %s (%s)", pair, result, reason)
        try:
            async with self.pool.connection() as conn:
                await conn.execute(
                    "INSERT INTO impuls_protokoll (erstellt_am, user_id, character_id, ergebnis,"
                    " grund, eintrag_id, turn_id, tore) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        datetime.fromtimestamp(now, UTC),
                        pair.user_id,
                        pair.character_id,
                        result,
                        reason,
                        entry_id,
                        turn_id,
                        Jsonb(decision.wire(), dumps=lambda o: json.dumps(o, default=str)),
                    ),
                )
        except Exception as exc:  # the decision stands; a lost row is reported
            log.error("impuls_protokoll row for %s not written: %s", pair, exc)

    # -- the loop ---------------------------------------------------------------------------

    async def reachable_pairs(self) -> list[Pair]:
        """Pairs with stack entries whose user would hear Nova: a socket open somewhere, or
        a working linked channel (docs/behaviour/reach.md). The gates, quiet hours and the
        daily limit are the same whichever way the impulse will reach them."""
        pairs = await impulse_stack.pairs(self.redis)
        found = []
        for pair in pairs:
            if not await impulse_stack.size(self.redis, pair):
                # Remove, then look again: a push adds the pair before its entry.
                await self.redis.srem(keys.impulse_stack_pairs(), str(pair))
                if not await impulse_stack.size(self.redis, pair):
                    continue
                await self.redis.sadd(keys.impulse_stack_pairs(), str(pair))
            if await self.redis.exists(keys.presence(pair.user_id)) or await self.redis.sismember(
                keys.channel_users(), pair.user_id
            ):
                found.append(pair)
        return found

    async def tick(self) -> list[tuple[Pair, Decision]]:
        results = []
        for pair in await self.reachable_pairs():
            try:
                results.append((pair, await self.check(pair)))
            except Exception:
                log.exception("impulse check for %s failed", pair)
        return results

    async def run(self, stop: asyncio.Event, period: float = DELIVERY_PERIOD) -> None:
        while not stop.is_set():
            started = time.monotonic()
            try:
                await self.tick()
            except Exception:
                log.exception("impulse delivery tick failed")
            wait = max(0.1, period - (time.monotonic() - started))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)
