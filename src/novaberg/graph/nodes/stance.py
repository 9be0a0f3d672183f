"""Stance node (Haltungsraum, docs/behaviour/nodes.md#stance). No model call.

Computes the turn's five behaviour magnitudes (`ei/stance.py`) from the landscape cluster
the conversation vector wrote into `gv_detail["cluster"]` (or, when this node runs before
the vector has written `gv_detail`, the same landscape computed here from the same
inputs — it needs no model) and Nova's wheel toward the user
(`charakter_hash.nutzer_gewichtung_rad`, row (character, user), read with the turn
context); the same row's `initiative_versatz` shifts the landscape's initiative score, and
the final bit says whether Nova may lead (impulse delivery reads it). The hash is written
by `memory/pair_state.py` (atomically: the impulse delivery reads it from another process).

Success: `stance` (wire `haltung`) in the state and the `haltung:{u}:{c}` hash with
gerechnet=1. Anything that makes the computation impossible (no cluster, a read error,
an unknown spoke, an unreadable expression) leaves `stance` **unset** — a missing key
means "not computed", an empty stance would look like one — and still writes the hash with
gerechnet=0 and the reason, so a reader never acts on an older stance as if it were
this turn's.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.agents.turn_context import PART_WHEEL, WheelRow
from novaberg.ei.canon import parse_number
from novaberg.ei.landscape import initiative_score, known_cluster, nova_leads
from novaberg.ei.stance import MAGNITUDES, StanceError, stance
from novaberg.graph.nodes.conversation_vector import landscape_of
from novaberg.graph.state import ConversationState, turn_context
from novaberg.memory.pair_state import replace_stance
from novaberg.pair import Pair

log = logging.getLogger(__name__)

REASON_OK: Final = "gerechnet"
REASON_NO_CLUSTER: Final = "kein_cluster"
REASON_READ_FAILED: Final = "lesefehler"
REASON_WHEEL: Final = "rad_unlesbar"
"""`grund` values of the haltung hash."""


def wheel_from_row(row: WheelRow | None) -> tuple[Any, float]:
    """(wheel JSON or None, initiative offset or 0) of the stance's row; no row → (None, 0).
    Raises ValueError for wheel text that is no JSON."""
    if row is None:
        return None, 0.0
    wheel = row.wheel
    if isinstance(wheel, str):
        wheel = json.loads(wheel)
    offset = parse_number(row.initiative_offset)
    return wheel, offset if offset is not None else 0.0


def _wheel(state: ConversationState) -> tuple[Any, float]:
    """The wheel row of the turn context. Raises WheelUnread when the context could not
    read it, ValueError when it is no JSON."""
    context = turn_context(state)
    if PART_WHEEL in context.failures:
        raise WheelUnread("not read with the turn context")
    return wheel_from_row(context.wheel)


class WheelUnread(Exception):
    """The turn context could not read the stance's row (logged there)."""


def stance_hash(
    *,
    computed: bool,
    cluster: str | None,
    turn_id: str,
    now: float,
    reason: str,
    values: dict[str, float] | None = None,
    initiative: bool | None = None,
    initiative_reason: str = "",
) -> dict[str, str]:
    """The `haltung:` hash fields (strings; magnitudes empty when not computed)."""
    fields: dict[str, str] = {
        "gerechnet": "1" if computed else "0",
        "cluster": cluster or "",
        "turn_id": turn_id,
        "zeit": f"{now:.3f}",
        "grund": reason,
        "initiative": "" if initiative is None else ("1" if initiative else "0"),
        "initiative_grund": initiative_reason,
    }
    for name in MAGNITUDES:
        fields[name] = "" if values is None else f"{values[name]:.4f}"
    return fields


async def stance_node(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Write `stance` and the `haltung:` hash (see the module docstring)."""
    pair = Pair(state.get("user_id", ""), state.get("character_id", ""))
    detail = state.get("hypothesis_detail")
    if detail is None:  # running beside the vector: the landscape needs no model
        detail = landscape_of(state).as_detail()
    cluster = known_cluster(detail.get("cluster"))
    turn_id = state.get("turn_id") or ""
    now = deps.clock()

    async def fail(reason: str, message: str) -> dict[str, Any]:
        log.error("stance: %s (turn=%s)", message, turn_id)
        await replace_stance(
            deps.redis,
            pair,
            stance_hash(computed=False, cluster=cluster, turn_id=turn_id, now=now, reason=reason),
        )
        return {"_log": {"gerechnet": False, "grund": reason, "fehler": message[:300]}}

    if cluster is None:
        return await fail(
            REASON_NO_CLUSTER, f"no landscape cluster in gv_detail: {detail.get('cluster')!r}"
        )
    try:
        wheel, offset = _wheel(state)
    except (WheelUnread, ValueError) as exc:
        return await fail(REASON_READ_FAILED, f"charakter_hash unreadable: {exc}")
    try:
        results = stance(cluster, wheel)
    except StanceError as exc:
        return await fail(REASON_WHEEL, str(exc))
    outside = [name for name, result in results.items() if result.ausserhalb]
    if outside:
        log.error("stance: %s outside [0, 1] (cluster=%s, turn=%s)", outside, cluster, turn_id)
    axes = detail.get("achsen")
    drives = bool(axes.get("I")) if isinstance(axes, dict) else False
    score = initiative_score(cluster, drives, offset)
    leads = nova_leads(score)
    reason = (
        f"cluster {cluster}, gegenueber_treibt={int(drives)}, versatz {offset:+.2f}"
        f" → {score:+.2f} {'≥' if leads else '<'} -0.05"
    )
    values = {name: result.ergebnis for name, result in results.items()}
    await replace_stance(
        deps.redis,
        pair,
        stance_hash(
            computed=True,
            cluster=cluster,
            turn_id=turn_id,
            now=now,
            reason=REASON_OK,
            values=values,
            initiative=leads,
            initiative_reason=reason,
        ),
    )
    computed = {
        **values,
        "cluster": cluster,
        "initiative": leads,
        "initiative_grund": reason,
        "details": {name: result.as_dict() for name, result in results.items()},
    }
    return {
        "stance": computed,
        "_log": {
            "gerechnet": True,
            "cluster": cluster,
            "ausserhalb": outside,
            **{
                name: [result.grundwert, result.modifikation, result.ergebnis]
                for name, result in results.items()
            },
        },
    }


def stance_text(stance_value: dict[str, Any] | None) -> str:
    """The `[HALTUNG]` lines the responder reads; "" when no stance was computed."""
    if not stance_value:
        return ""
    words = {
        "umfang": ("knapp", "ausführlich"),
        "fragen": ("kaum Fragen", "viele Fragen"),
        "naehe": ("auf Abstand", "nah"),
        "waerme": ("sachlich-kühl", "warm"),
        "draengen": ("abwartend", "drängend"),
    }
    lines = []
    for name in MAGNITUDES:
        value = float(stance_value.get(name, 0.0))
        low, high = words[name]
        lines.append(f"{name}: {value:.2f} ({high if value >= 0.5 else low})")
    lead = "du darfst führen" if stance_value.get("initiative") else "lass den Nutzer führen"
    return "\n".join([*lines, f"Initiative: {lead}"])
