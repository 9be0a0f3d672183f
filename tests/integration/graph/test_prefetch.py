"""db_access reads the turn context: with its own reads, what later nodes would each read
alone (the stance's wheel row, the proactive window's appointments, the router's pending
question, the stored situation, the last gv:detail), and those nodes use it instead of
another round trip — real Redis and PostgreSQL."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from test_understanding import NOW, set_wheel

from novaberg.agents.registry import discover_agents
from novaberg.agents.timeline import repository
from novaberg.agents.turn_context import (
    HookReads,
    ProactiveAppointments,
    StoredSituation,
    TurnContext,
    WheelRow,
)
from novaberg.graph.appointments import proactive_window
from novaberg.graph.contract import GraphDeps
from novaberg.graph.nodes.appointment_reading import appointment_reading
from novaberg.graph.nodes.db_access import db_access
from novaberg.graph.nodes.enricher import hook_entries, stored_cluster
from novaberg.graph.nodes.router import router
from novaberg.graph.nodes.situation import situation_node
from novaberg.graph.nodes.stance import stance_node
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("meister", "nova")


def _context(**parts: Any) -> TurnContext:
    """A turn context holding nothing but `parts` (what a node is handed)."""
    window = proactive_window(datetime.fromtimestamp(NOW), ZoneInfo("UTC"))
    empty: dict[str, Any] = {
        "character_name": "Nova",
        "persona": "",
        "character_profile": None,
        "user_profile": None,
        "user_weight": None,
        "identities": (),
        "directives": (),
        "nova_state": {},
        "session_turns": (),
        "session_summary": "",
        "goals": (),
        "wheel": None,
        "appointments": ProactiveAppointments(window.start, window.end, ()),
        "pending_question": None,
        "situation": StoredSituation(None, None, None),
        "hypothesis_detail": None,
        "hooks": None,
    }
    return TurnContext(**{**empty, **parts})


def _state(**extra: Any) -> Any:
    return {
        "user_id": PAIR.user_id,
        "character_id": PAIR.character_id,
        "turn_id": "t-vorab",
        "event_source": "character",
        "event_payload": {},
        "graph_role": "character",
        **extra,
    }


async def _dentist(deps: GraphDeps) -> None:
    now = datetime.fromtimestamp(NOW, tz=deps.settings.tz)
    await repository.insert(
        deps.pool,
        PAIR.user_id,
        title="Zahnarzt Dr. Weber",
        event_time=(now + timedelta(days=1)).replace(hour=10, minute=0),
        event_type="termin",
        details="",
        precision="minute",
        now=now,
    )


async def test_db_access_reads_what_later_nodes_need(deps: GraphDeps) -> None:
    await set_wheel(deps, {"distanz": 1.0}, offset=-0.5)
    await _dentist(deps)
    await deps.redis.set(keys.pending_agent(PAIR.user_id), json.dumps({"agent_name": "x"}))
    await deps.redis.set(keys.situation(PAIR), json.dumps({"gegenstand": "Umzug"}))
    await deps.redis.set(keys.hypothesis_detail(PAIR), json.dumps({"cluster": "bier"}))

    update = await db_access(_state(), deps)

    context = update["turn_context"]
    assert context.wheel is not None
    assert context.wheel.wheel == {"distanz": 1.0}
    assert float(context.wheel.initiative_offset) == -0.5
    appointments = context.appointments
    window = proactive_window(datetime.fromtimestamp(NOW, tz=deps.settings.tz), deps.settings.tz)
    assert (appointments.start, appointments.end) == (window.start, window.end)
    assert [row["title"] for row in appointments.rows] == ["Zahnarzt Dr. Weber"]
    assert context.pending_question == {"agent_name": "x", "parameter": {}}
    assert json.loads(context.situation.current)["gegenstand"] == "Umzug"
    assert context.hypothesis_detail == {"cluster": "bier"}
    assert update["_log"]["ausfaelle"] == []


async def test_the_appointment_reading_takes_db_access_rows_for_the_same_window(
    deps: GraphDeps,
) -> None:
    """Rows handed over for the proactive window are shown as they are (the database holds
    none here); for another window the node reads the timeline itself."""
    tz = deps.settings.tz
    window = proactive_window(datetime.fromtimestamp(NOW, tz=tz), tz)
    row = {
        "id": 7,
        "title": "Nur vorab gelesen",
        "event_time": window.start + timedelta(hours=9),
        "event_type": "termin",
        "details": "",
        "precision": "minute",
    }
    loaded = ProactiveAppointments(window.start, window.end, (row,))
    update = await appointment_reading(_state(turn_context=_context(appointments=loaded)), deps)
    assert [t["titel"] for t in update["appointment_reading"]["termine"]] == ["Nur vorab gelesen"]

    other = ProactiveAppointments(window.start - timedelta(days=1), window.end, (row,))
    update = await appointment_reading(_state(turn_context=_context(appointments=other)), deps)
    assert update["appointment_reading"]["termine"] == []  # read: the timeline is empty


async def test_the_stance_router_situation_and_enricher_use_what_db_access_read(
    deps: GraphDeps,
) -> None:
    """Each reads the handed-over value, not Redis/PostgreSQL (which hold nothing here)."""
    wheel = WheelRow(wheel={"distanz": 1.0}, initiative_offset=-1.0)
    update = await stance_node(
        _state(turn_context=_context(wheel=wheel), hypothesis_detail={"cluster": "bier"}), deps
    )
    assert update["stance"]["details"]["naehe"]["art"] == "uebersteuerung"
    assert update["stance"]["initiative"] is False

    pending = {"agent_name": "timeline", "parameter": {}}
    update = await router(
        _state(user_prompt="ja", turn_context=_context(pending_question=pending)), deps
    )
    assert update["_log"] == {"weg": "resume", "agent": "timeline"}

    bubble = StoredSituation(None, json.dumps({"gegenstand": "Umzug"}), "t-0")
    update = await situation_node(
        _state(
            own_thought="Wie lief der Umzug?",
            event_payload={"reiz_herkunft": "eigener_impuls", "ausloeser_turn_id": "t-0"},
            turn_context=_context(situation=bubble),
        ),
        deps,
    )
    assert update["situation_bridge"]["gefunden"] is True

    handed = _context(hypothesis_detail={"cluster": "bier"})
    assert await stored_cluster(deps, PAIR, handed) == "bier"
    assert await stored_cluster(deps, PAIR) == "paradox"  # nothing stored, read here


async def test_db_access_reads_the_enrich_hooks_and_the_enricher_only_shapes_them(
    deps: GraphDeps,
) -> None:
    """The hooks' reads travel with db_access's batch; the enricher makes the same entries
    of them as the hook would, without reading again (the database holds no note here)."""
    registry = discover_agents()
    await _dentist(deps)
    text = "Wann ist der Zahnarzt, und was steht auf der Einkaufsliste?"

    update = await db_access(_state(user_prompt=text), deps, registry=registry)

    loaded = update["turn_context"].hooks
    assert loaded.text == text
    assert [row["title"] for row in loaded.rows["timeline"]] == ["Zahnarzt Dr. Weber"]
    assert loaded.rows["notizen"] == []
    expected, _ = await hook_entries(registry, deps, PAIR.user_id, text)
    entries, counts = await hook_entries(registry, deps, PAIR.user_id, text, loaded)
    assert entries == expected and [e["inhalt"][:8] for e in entries] == ["Termin: "]
    assert (counts["notizen"], counts["timeline"]) == (0, 1)

    note = {"name": "Einkaufsliste", "typ": "einkauf", "text": "Milch,  Brot"}
    handed = HookReads(text, {"notizen": [note]})
    entries, counts = await hook_entries(registry, deps, PAIR.user_id, text, handed)
    assert [e["inhalt"] for e in entries if e["quelle"] == "notizen"] == [
        "Notiz „Einkaufsliste“: Milch, Brot"
    ]
    assert counts["timeline"] == 1  # not handed over: read here
    entries, counts = await hook_entries(registry, deps, PAIR.user_id, "Zahnarzt", handed)
    assert counts["notizen"] == 0  # handed over for another text: read here (nothing stored)
