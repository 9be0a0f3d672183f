"""Exactly one outcome per run: a `character_response` or a `turn_gescheitert`.

Every accepted `nachrichten_id` must end in exactly one message naming it
(docs/behaviour/events.md#outcomes). A run is identified by its `turn_id` and
`trigger_count` (a thinker retry inherits the turn_id but is a run of its own); the outcome
marker is claimed in the same atomic script that numbers and publishes the message, so a
duplicate event, a recovery racing a slow worker, or a failure after the answer left can
never produce a second outcome.

Until its run ends, an id is always in one durable place: the prompt queue, a block or
claimed event in a worker's processing list, the event queue, the carried list of a
superseded run (events/queues.py), or — while the person has paused the character — the
held list `geparkte_ereignisse:{u}:{c}` (events/parked.py), from which it goes back to the
event queue on activation or, once held longer than `NOVABERG_PAUSE_HOLD`, into a processing
list to end in `turn_gescheitert` (`charakter_pausiert`).

Through a Redis outage: sending an outcome is retried until Redis is back
(store/retry.py) — safe, since a retry of a send that got through finds the
marker claimed and sends nothing. The run that could not end at all (Redis gone
longer than the retry's patience) leaves its processing entry behind, and its own
worker ends it once Redis answers again (events/worker.py, "Redis outages").
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

import redis.asyncio as aioredis

from novaberg.events.delivery import Delivery
from novaberg.events.model import FailedMessage, ResponseMessage
from novaberg.llm.errors import (
    GateTimeout,
    ModelContextExceeded,
    ModelOutputError,
    ModelTimeout,
    ModelUnavailable,
)
from novaberg.store import keys
from novaberg.store.retry import is_outage, until_redis_back

log = logging.getLogger(__name__)

REASON_MAX = 200
"""A failure reason is a short line for the client, not a traceback."""

# Reasons (wire values of `grund`)
GATE_TIMEOUT = "gate_timeout"
MODEL_TIMEOUT = "modell_timeout"
MODEL_OUTPUT = "modell_ausgabe_unlesbar"
MODEL_UNAVAILABLE = "modell_nicht_erreichbar"
MODEL_CONTEXT = "modell_kontext_ueberschritten"
NO_ANSWER = "keine_antwort"
WORKER_DIED = "worker_ausgefallen"
WORKER_STOPPED = "worker_beendet"
REDIS_UNAVAILABLE = "redis_nicht_erreichbar"
RUN_STRANDED = "lauf_verwaist"
"""A live worker found a run of its own that nothing ended (a Redis outage outlasted the
run's retries, or a start step's reply was lost)."""
PAUSED = "charakter_pausiert"
"""The person paused the character and did not activate it within the hold time
(events/parked.py)."""
NODE_ERROR = "fehler_im_knoten"
BAD_EVENT = "ereignis_ungueltig"
STOPPED = "gestoppt"
"""The person stopped the run before its answer left (events/turn_controls.py)."""
WITHDRAWN = "zurueckgezogen"
"""The person took the message back before the answer left: no history row is kept."""


def outcome_key(user_id: str, turn_id: str, trigger_count: int) -> str:
    return keys.turn_outcome(user_id, f"{turn_id}:{trigger_count}")


def reason_for(exc: BaseException, where: str | None = None) -> str:
    """A short wire reason naming the kind of failure (and the node, if known)."""
    if isinstance(exc, GateTimeout):
        code = GATE_TIMEOUT
    elif isinstance(exc, ModelTimeout):
        code = MODEL_TIMEOUT
    elif isinstance(exc, ModelOutputError):
        code = MODEL_OUTPUT
    elif isinstance(exc, ModelUnavailable):
        code = MODEL_UNAVAILABLE
    elif isinstance(exc, ModelContextExceeded):
        code = MODEL_CONTEXT
    elif is_outage(exc):
        code = REDIS_UNAVAILABLE
    else:
        code = f"{NODE_ERROR}: {type(exc).__name__}"
    text = f"{code} ({where})" if where else code
    return text[:REASON_MAX]


class FailureRecorder(Protocol):
    """Keeps a failed user turn for the conversation history (store/failed_turns.py)."""

    async def record(
        self,
        user_id: str,
        character_id: str,
        turn_id: str,
        message_ids: Sequence[str],
        reason: str,
        prompts: Sequence[str],
    ) -> None: ...


class Outcomes:
    def __init__(
        self,
        redis: aioredis.Redis,
        delivery: Delivery | None = None,
        failures: FailureRecorder | None = None,
    ) -> None:
        self.redis = redis
        self.delivery = delivery or Delivery(redis)
        self.failures = failures

    async def respond(
        self,
        user_id: str,
        character_id: str,
        turn_id: str,
        trigger_count: int,
        message_ids: list[str],
        payload: dict[str, Any],
    ) -> int:
        """Send the released answer; return its seq (0 = this run already had an outcome).

        `payload` is the answer as the graph built it, complete and sent as it is
        (`TurnGraphs.response_payload`: the identity its event named included). The run's
        identity arguments key the outcome marker; they name the run only in a payload
        that names none itself (a bare text).
        """
        identity = {
            "character_id": character_id,
            "turn_id": turn_id,
            "nachrichten_ids": message_ids,
        }
        message = ResponseMessage.model_validate({**identity, **payload})
        seq = await self._send(user_id, message, turn_id, trigger_count)
        if seq == 0:
            log.warning("duplicate answer for turn %s/%d suppressed", turn_id, trigger_count)
        return seq

    async def fail(
        self,
        user_id: str,
        character_id: str,
        turn_id: str,
        trigger_count: int,
        message_ids: list[str],
        reason: str,
        prompts: Sequence[str] = (),
        *,
        kept: bool = True,
    ) -> int:
        """Report a run without an answer; return its seq (0 = already had an outcome).
        `kept` False: no history row (a regenerate that failed: the turn keeps its answer).
        A sent failure that names the user's ids is kept with `prompts` (their texts) for
        the history, so a page loaded later can show it and send the texts again."""
        message = FailedMessage(
            character_id=character_id,
            turn_id=turn_id,
            nachrichten_ids=list(message_ids),
            grund=reason[:REASON_MAX],
        )
        seq = await self._send(user_id, message, turn_id, trigger_count)
        if seq:
            log.warning(
                "turn %s of %s:%s failed (%s); ids %s",
                turn_id,
                user_id,
                character_id,
                reason,
                message_ids,
            )
            if (
                kept
                and self.failures is not None
                and message_ids
                and not reason.startswith(WITHDRAWN)
            ):
                await self.failures.record(
                    user_id, character_id, turn_id, message_ids, message.reason, prompts
                )
        else:
            log.info(
                "failure of turn %s/%d not sent: it already had an outcome", turn_id, trigger_count
            )
        return seq

    async def decided(self, user_id: str, turn_id: str, trigger_count: int) -> bool:
        key = outcome_key(user_id, turn_id, trigger_count)
        found = await until_redis_back(lambda: self.redis.exists(key), f"outcome of {turn_id}")
        return bool(found)

    async def _send(
        self,
        user_id: str,
        message: ResponseMessage | FailedMessage,
        turn_id: str,
        trigger_count: int,
    ) -> int:
        key = outcome_key(user_id, turn_id, trigger_count)
        return await until_redis_back(
            lambda: self.delivery.send(user_id, message, outcome_key=key),
            f"outcome of turn {turn_id}/{trigger_count}",
        )
