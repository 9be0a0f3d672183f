"""Path 1's salience results for the CharacterGraph (docs/behaviour/nodes.md#enricher).

The HumanGraph hands the turn on before its salience ran (nodes/session_turn.py); its
event says so with `pfad1_nachlauf`. The CharacterGraph's enricher calls `path1_tail`
concurrently with its own reads: it takes `salienz_human` and the user's intentions from
`pfad1_nachlauf:{turn_id}` — waiting only while Path 1's salience still runs, which for a
short utterance is one model call, the same round as the router's — so the search key, the
landscape, the answer's `user_intentionen`, Nova's salience (`pflicht = salienz_human ×
nutzer_gewichtung`) and the stored turns get the same values as when Path 1 ran to its end
first. A tail that does not deliver within `HUMAN_TAIL_TIMEOUT_S` leaves `salienz_human`
None and names the gap in `human_tail_failure` (never a made-up value).
"""

from __future__ import annotations

import logging
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.ei.canon import parse_number
from novaberg.graph.state import ConversationState
from novaberg.memory.pair_state import await_path1_tail
from novaberg.wire import FIELD_HUMAN_SALIENCE, FIELD_PATH1_TAIL, FIELD_USER_INTENTIONS

log = logging.getLogger(__name__)

HUMAN_TAIL_TIMEOUT_S: Final = 90.0
"""How long the turn may wait for Path 1's salience: far above a scoring call's time,
well below the turn marker's 600 s."""

TAIL_FAILED: Final = "ausfall"
"""Key of a tail result that reports Path 1's salience failed."""

TIMED_OUT: Final = "zeitueberschreitung"


def tail_follows(state: ConversationState) -> bool:
    """Whether this run's event announced Path 1's salience results."""
    return bool((state.get("event_payload") or {}).get(FIELD_PATH1_TAIL))


async def path1_tail(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """State update with Path 1's late salience results ({} unless the event announces
    them); the pipeline-log summary rides under the `_log` key."""
    if not tail_follows(state):
        return {}
    turn_id = str(state.get("turn_id") or "")
    result = await await_path1_tail(deps.redis, turn_id, HUMAN_TAIL_TIMEOUT_S)
    if result is None:
        log.error(
            "Path 1's salience of turn %s did not arrive within %.0f s",
            turn_id,
            HUMAN_TAIL_TIMEOUT_S,
        )
        return {
            "human_salience": None,
            "human_tail_failure": TIMED_OUT,
            "_log": {"ausfall": TIMED_OUT},
        }
    update: dict[str, Any] = {"human_salience": parse_number(result.get(FIELD_HUMAN_SALIENCE))}
    intentions = result.get(FIELD_USER_INTENTIONS)
    if isinstance(intentions, list):
        update["user_intentions"] = [str(item) for item in intentions]
    failure = result.get(TAIL_FAILED)
    update["human_tail_failure"] = str(failure) if failure else None
    update["_log"] = {
        "salienz_human": update["human_salience"],
        "intentionen": len(update.get("user_intentions") or []),
        **({"ausfall": str(failure)} if failure else {}),
    }
    return update
