"""The understanding nodes through the real CharacterGraph (scripted model, real Redis and
PostgreSQL): situation + memory anchor, landscape and its persistence, stance, appointment
reading, and the enricher's search key."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from graph_helpers import anchor_groups, script_human, with_rewrite
from psycopg.types.json import Jsonb
from test_character_graph import (
    AFTER,
    ANSWER,
    PAIR,
    ROUTER_PLAIN,
    human_turn,
    responder_calls,
    run_character,
    run_human,
    script_character,
    user_turn,
)

from novaberg.agents.timeline import repository
from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.nodes.db_access import db_access
from novaberg.graph.nodes.stance import stance_hash, stance_node
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.pair_state import store_situation
from novaberg.store import keys
from novaberg.store.entities import resolve_entities
from novaberg.store.keys import SITUATION_TTL
from novaberg.store.pipeline_log import read_turn

NOW = 1_790_000_000.0  # graph conftest's FIXED_NOW


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The query rewrite is what several tests here are about: on in either profile (the
    compact profile turns it off by default)."""
    return with_rewrite(settings)


SITUATION_BELLO: dict[str, Any] = {
    "gegenstand": "Bello soll mit umziehen",
    "nutzerziel": "eine Wohnung finden, in die Bello darf",
    "objekte": [
        {"name": "Bello", "eigenschaften": {"rasse": "Dackel"}, "offen": ["alter"]},
        {"name": "Wohnung", "eigenschaften": {"ort": "Köln"}, "offen": ["miete", "haustiere"]},
    ],
    "objekt_bezug": "Wohnung",
    "angebot": "Nova bot an, Vermieter-Fragen zu sammeln",
    "angebot_angenommen": True,
    "offen": ["Darf Bello in die Wohnung?"],
}


def composer_calls(scripted: ScriptedLLM) -> list[dict[str, Any]]:
    return [c for c in scripted.calls if "Du bereitest den Inhalt einer Antwort vor" in c["prompt"]]


def script_situation(scripted: ScriptedLLM, answer: Any = SITUATION_BELLO) -> None:
    scripted.add(".*", answer, schema="SituationReading")


async def set_wheel(deps: GraphDeps, wheel: dict[str, float], offset: float | None = None) -> None:
    async with deps.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO charakter_hash (user_id, character_id, nutzer_gewichtung_rad,"
            " initiative_versatz) VALUES (%s, %s, %s, %s)",
            (PAIR.character_id, PAIR.user_id, Jsonb(wheel), offset),
        )


# --- situation + memory anchor -----------------------------------------------------------------


async def test_situation_is_written_forward_and_stored_for_four_hours(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted)
    nodes, final, payload = await user_turn(runtime, "Darf Bello mit in die neue Wohnung?")

    # the situation runs next to the enricher and the router; the anchor waits for it and
    # for the reducer's memory, and comes before the composer
    assert nodes.index("situation_node") < nodes.index("memory_anchor")
    assert nodes.index("reducer") < nodes.index("memory_anchor") < nodes.index("composer")
    situation = final["situation"]
    assert situation["gegenstand"] == "Bello soll mit umziehen" and situation["stand"] == "neu"
    assert final["object_reference"] == "Wohnung"
    assert situation["angebot"].startswith("Nova bot an") and situation["angebot_angenommen"]
    # both objects are named in the utterance → acute; distance = open properties
    assert final["object_judgement"] == [
        {"objekt": "Bello", "bekannt": 1, "strecke": 1, "status": "offen"},
        {"objekt": "Wohnung", "bekannt": 1, "strecke": 2, "status": "offen"},
    ]
    stored = json.loads(await deps.redis.get(keys.situation(PAIR)))
    assert stored["objekt_bezug"] == "Wohnung"
    assert 14_000 < await deps.redis.ttl(keys.situation(PAIR)) <= 14_400
    history = await deps.redis.hget(keys.situation_history(PAIR), payload["turn_id"])
    assert json.loads(history)["gegenstand"] == "Bello soll mit umziehen"

    # the next turn's call sees the stored understanding
    await user_turn(runtime, "Und was ist mit der Miete?")
    prompts = [c["prompt"] for c in scripted.calls if c["schema"] == "SituationReading"]
    assert "[BISHERIGER STAND]" not in prompts[0]
    assert "Bello soll mit umziehen" in prompts[1]


async def test_failed_situation_call_keeps_the_stored_understanding(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted)
    await user_turn(runtime, "Darf Bello mit in die neue Wohnung?")
    scripted.add(".*", schema="SituationReading", fault="timeout")
    _, final, _ = await user_turn(runtime, "Hallo?")
    assert final["situation"]["stand"] == "ausfall"
    assert final["situation"]["gegenstand"] == "Bello soll mit umziehen"


async def test_impulse_bridges_to_the_triggering_turn_without_a_model_call(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted)
    _, _, first = await user_turn(runtime, "Darf Bello mit in die neue Wohnung?")
    calls_before = sum(1 for c in scripted.calls if c["schema"] == "SituationReading")
    impulse = {
        "turn_id": "impuls-1",
        "eigener_gedanke": "Ich könnte nach hundefreundlichen Wohnungen suchen.",
        "reiz_herkunft": "eigener_impuls",
        "gedanke_arousal": 0.5,
        "ausloeser_turn_id": first["turn_id"],
    }
    _, final = await run_character(runtime, impulse, source="character")
    assert sum(1 for c in scripted.calls if c["schema"] == "SituationReading") == calls_before
    bridge = final["situation_bridge"]
    assert bridge["ausloeser_turn_id"] == first["turn_id"]
    assert bridge["gefunden"] is True
    assert bridge["objekte_damals"] == ["Bello", "Wohnung"]
    assert bridge["gleicher_gegenstand"] is True
    assert final["situation"]["stand"] == "uebernommen"


async def test_memory_anchor_puts_facts_in_front_of_memory(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    vector = (await deps.model.embed(["x"]))[0]
    (bello,) = (await resolve_entities(deps.pool, PAIR, ["Bello"])).ids
    async with deps.pool.connection() as conn:
        # bound to Bello's entity, though the text does not name him
        await conn.execute(
            "INSERT INTO lzg_knoten (user_id, character_id, inhalt, embedding, gewicht_roh,"
            " gewicht_absolut, gewicht_decay, themen, entitaet_ids)"
            " VALUES (%s, %s, %s, %s, 1, 3, 3, %s, %s)",
            (
                PAIR.user_id,
                PAIR.character_id,
                "Er hat Angst vor Gewitter.",
                vector,
                ["hund"],
                [bello],
            ),
        )
        # names Bello, but is bound to no entity: not his
        await conn.execute(
            "INSERT INTO lzg_knoten (user_id, character_id, inhalt, embedding, gewicht_roh,"
            " gewicht_absolut, gewicht_decay, themen) VALUES (%s, %s, %s, %s, 1, 3, 3, %s)",
            (
                PAIR.user_id,
                PAIR.character_id,
                "Bello heißt auch die Bar um die Ecke.",
                vector,
                ["bello"],
            ),
        )
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted)
    _, final, _ = await user_turn(runtime, "Darf Bello mit in die neue Wohnung?")

    assert final["object_entities"][0] == {"objekt": "Bello", "entitaet_id": bello}
    groups = anchor_groups(final)
    assert list(groups) == ["Bello", "Wohnung"]
    assert groups["Bello"][-1] == "Er hat Angst vor Gewitter."
    context = final["memory_context"]
    assert context.index("Fakten zu Bello") < context.index("Er hat Angst vor Gewitter.")
    assert "Bello: rasse = Dackel" in final["memory_context_composer"]
    appended = [m for m in final["long_term_resonance"]["erinnerungen"] if m.get("anker")]
    assert [m["inhalt"] for m in appended] == ["Er hat Angst vor Gewitter."]
    # the composer reads the anchored memory
    assert "Er hat Angst vor Gewitter." in composer_calls(scripted)[-1]["prompt"]


async def test_memory_anchor_without_acute_object_changes_nothing(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted, {**SITUATION_BELLO, "objekt_bezug": "", "objekte": []})
    _, final, _ = await user_turn(runtime, "Wie geht's dir?")
    assert anchor_groups(final) == {}
    assert AFTER["memory_anchor"]["memory_context"] == AFTER["reducer"]["memory_context"]


# --- landscape, persistence, stance ----------------------------------------------------------


async def test_landscape_is_stored_and_drives_the_next_search(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)  # freude 0.7, vertrauen, locker
    script_character(scripted)
    _, final, _ = await user_turn(runtime, "Wie geht's dir?")
    detail = final["hypothesis_detail"]
    assert detail["cluster"] in (
        "feuerwerk",
        "kissenschlacht",
    )  # energetic, positive, close (register pulled toward vertrauen/locker)
    assert set(detail["achsen"]) == {"E", "R", "N", "V", "T", "I"}
    assert 0 <= detail["sektor"] < 64
    stored = json.loads(await deps.redis.get(keys.hypothesis_detail(PAIR)))
    assert stored["cluster"] == detail["cluster"]
    previous = json.loads(await deps.redis.get(keys.previous_turn(PAIR)))
    assert previous == {"antwort": ANSWER, "modus": final["internal"].emotion.mode}

    # a stored workshop landscape → spreading depth 0 on the next turn
    await deps.redis.set(keys.hypothesis_detail(PAIR), json.dumps({"cluster": "werkstatt"}))
    _, second, _ = await user_turn(runtime, "Und sonst?")
    assert second["long_term_resonance"]["cluster"] == "werkstatt"
    assert second["long_term_resonance"]["sprung_tiefe"] == 0
    await deps.redis.set(keys.hypothesis_detail(PAIR), json.dumps({"cluster": "glut"}))
    _, third, _ = await user_turn(runtime, "Erzähl mal.")
    assert third["long_term_resonance"]["sprung_tiefe"] == 3


async def test_first_turn_searches_with_the_default_cluster(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    _, final, _ = await user_turn(runtime, "Wie geht's dir?")
    assert final["long_term_resonance"]["cluster"] == "paradox"


async def test_stance_is_stored_and_read_by_the_responder(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    await set_wheel(deps, {"distanz": 1.0, "wohlwollen": 0.5}, offset=-1.0)
    script_human(scripted)
    script_character(scripted)
    nodes, final, payload = await user_turn(runtime, "Wie geht's dir?")

    # the landscape (no model) gives the stance its cluster before the vector's call
    assert nodes.index("landscape") < nodes.index("stance_space") < nodes.index("composer")
    assert nodes.index("conversation_vector") < nodes.index("responder")
    haltung = final["stance"]
    assert haltung["cluster"] == final["hypothesis_detail"]["cluster"]
    assert haltung["details"]["naehe"]["art"] == "uebersteuerung"
    assert haltung["naehe"] == pytest.approx(0.0)
    assert haltung["initiative"] is False  # offset −1 takes the lead away
    stored = await deps.redis.hgetall(keys.stance(PAIR))
    assert stored["gerechnet"] == "1"
    assert stored["turn_id"] == payload["turn_id"]
    assert float(stored["naehe"]) == pytest.approx(0.0)
    assert stored["initiative"] == "0"
    prompt = responder_calls(scripted)[-1]["prompt"]
    assert "[HALTUNG]" in prompt and "naehe: 0.00 (auf Abstand)" in prompt
    await deps.log.flush()  # type: ignore[union-attr]
    rows = [
        r for r in await read_turn(deps.pool, payload["turn_id"]) if r["node"] == "stance_space"
    ]
    assert rows and rows[0]["inhalt"]["naehe"][2] == pytest.approx(0.0)


async def test_stance_without_a_cluster_writes_gerechnet_zero(
    deps: GraphDeps,
) -> None:
    state: Any = {
        "user_id": PAIR.user_id,
        "character_id": PAIR.character_id,
        "turn_id": "t-ohne",
        "hypothesis_detail": {"cluster": None},
    }
    update = await stance_node(state, deps)
    assert "stance" not in update
    stored = await deps.redis.hgetall(keys.stance(PAIR))
    assert stored["gerechnet"] == "0" and stored["grund"] == "kein_cluster"
    assert stored["naehe"] == ""


async def test_stance_with_an_unreadable_wheel_writes_gerechnet_zero(deps: GraphDeps) -> None:
    await set_wheel(deps, {"neugier": 1.0})
    state: Any = {
        "user_id": PAIR.user_id,
        "character_id": PAIR.character_id,
        "turn_id": "t-rad",
        "hypothesis_detail": {"cluster": "bier"},
    }
    state["turn_context"] = (await db_access(state, deps))["turn_context"]  # reads the wheel
    update = await stance_node(state, deps)
    assert "stance" not in update
    stored = await deps.redis.hgetall(keys.stance(PAIR))
    assert (stored["gerechnet"], stored["grund"], stored["cluster"]) == (
        "0",
        "rad_unlesbar",
        "bier",
    )


# --- appointment reading ---------------------------------------------------------------------


async def test_nova_knows_tomorrows_dentist_without_the_timeline_agent(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    tz = deps.settings.tz
    now = datetime.fromtimestamp(NOW, tz=tz)
    tomorrow = (now + timedelta(days=1)).replace(hour=10, minute=0, second=0, microsecond=0)
    await repository.insert(
        deps.pool,
        PAIR.user_id,
        title="Zahnarzt Dr. Weber",
        event_time=tomorrow,
        event_type="termin",
        details="",
        precision="minute",
        now=now,
    )
    await repository.insert(
        deps.pool,
        PAIR.user_id,
        title="Friseur",
        event_time=now + timedelta(days=9),
        event_type="termin",
        details="",
        precision="minute",
        now=now,
    )
    script_human(scripted)
    script_character(scripted)
    nodes, final, _ = await user_turn(runtime, "Was steht morgen an?")

    assert final["needs_timeline"] is False and final["management_action"] == ""
    assert "planner" not in nodes and "agent_dispatch" not in nodes
    assert nodes.index("router") < nodes.index("appointments") < nodes.index("composer")
    reading = final["appointment_reading"]
    assert reading["fenster"]["art"] == "proaktiv"
    assert [t["titel"] for t in reading["termine"]] == ["Zahnarzt Dr. Weber"]
    prompt = composer_calls(scripted)[-1]["prompt"]
    assert "[TERMINE]" in prompt
    assert "Zahnarzt Dr. Weber" in prompt and "10:00" in prompt
    assert "Friseur" not in prompt


async def test_asked_range_reads_that_range(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    tz = deps.settings.tz
    now = datetime.fromtimestamp(NOW, tz=tz)
    later = (now + timedelta(days=9)).replace(hour=9, minute=0, second=0, microsecond=0)
    await repository.insert(
        deps.pool,
        PAIR.user_id,
        title="Friseur",
        event_time=later,
        event_type="termin",
        details="",
        precision="minute",
        now=now,
    )
    script_human(scripted)
    script_character(scripted)
    scripted.add(
        ".*",
        {
            **ROUTER_PLAIN,
            "needs_timeline": True,
            "timeline_query": {"type": "range", "date": later.date().isoformat()},
        },
        schema="RouterDecision",
    )
    _, final, _ = await user_turn(runtime, "Was ist am Freitag in einer Woche?")
    reading = final["appointment_reading"]
    assert reading["fenster"]["art"] == "range"
    assert [t["titel"] for t in reading["termine"]] == ["Friseur"]


# --- enricher: search text and search key ----------------------------------------------------


def origin_of(final: dict[str, Any]) -> tuple[str, str]:
    return final["search_text_source"], final["search_text"]


async def test_query_rewrite_from_the_second_turn(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add(r"Suchanfrage für das Gedächtnis", "Wann zieht der Nutzer nach Köln um?")
    _, first, _ = await user_turn(runtime, "Ich ziehe nach Köln.")
    assert origin_of(first) == ("zu_wenig_verlauf", "Ich ziehe nach Köln.")
    _, second, _ = await user_turn(runtime, "Und wann genau?")
    assert origin_of(second) == ("rewrite", "Wann zieht der Nutzer nach Köln um?")
    rewrite = [c for c in scripted.calls if "Suchanfrage für das Gedächtnis" in c["prompt"]]
    assert len(rewrite) == 1 and "Ich ziehe nach Köln." in rewrite[0]["prompt"]


@pytest.mark.parametrize(
    ("rule", "origin"),
    [
        ({"output": "   "}, "leer"),
        ({"output": "x" * 301}, "zu_lang"),
        ({"fault": "malformed"}, "aufruf_gescheitert"),
        ({"fault": "timeout"}, "aufruf_gescheitert"),
    ],
)
async def test_unusable_rewrite_searches_the_raw_text(
    runtime: GraphRuntime, scripted: ScriptedLLM, rule: dict[str, Any], origin: str
) -> None:
    script_human(scripted)
    script_character(scripted)
    await user_turn(runtime, "Ich ziehe nach Köln.")
    scripted.add(r"Suchanfrage für das Gedächtnis", **rule)
    _, final, _ = await user_turn(runtime, "Und wann genau?")
    assert origin_of(final) == (origin, "Und wann genau?")


async def test_rewrite_switched_off(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    off = GraphRuntime(
        GraphDeps(
            settings=deps.settings.model_copy(update={"query_rewrite": False}),
            redis=deps.redis,
            pool=deps.pool,
            model=deps.model,
            clock=deps.clock,
        )
    )
    script_human(scripted)
    script_character(scripted)
    await user_turn(off, "Ich ziehe nach Köln.")
    _, final, _ = await user_turn(off, "Und wann genau?")
    assert origin_of(final) == ("abgeschaltet", "Und wann genau?")
    assert not [c for c in scripted.calls if "Suchanfrage für das Gedächtnis" in c["prompt"]]


async def test_history_without_text_is_verlauf_leer(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    for _ in range(2):
        await deps.redis.rpush(
            keys.session_turns(PAIR), json.dumps({"rolle": "assistant", "inhalt": "", "zeit": NOW})
        )
    payload = await run_human(runtime, human_turn("Und?"))
    # the human graph wrote "Und?" too: blank it out to get a history without text
    raw = await deps.redis.lrange(keys.session_turns(PAIR), 0, -1)
    last = json.loads(raw[-1])
    last["inhalt"] = ""
    await deps.redis.lset(keys.session_turns(PAIR), len(raw) - 1, json.dumps(last))
    _, final = await run_character(runtime, payload)
    assert final["search_text_source"] == "verlauf_leer"


async def test_goal_pulls_the_search_key(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    text = "Ich ziehe nach Köln."
    goal = (await deps.model.embed(["Köln kennenlernen"]))[0]
    prompt_vector = (await deps.model.embed([text]))[0]
    # a goal close enough to activate: half the prompt, half its own direction
    mixed = [0.8 * p + 0.2 * g for p, g in zip(prompt_vector, goal, strict=True)]
    async with deps.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO ziele (user_id, character_id, zielsatz, motivation, embedding)"
            " VALUES ('nova', 'meister', 'Köln kennenlernen', 1.0, %s)",
            (mixed,),
        )
    script_human(scripted)
    script_character(scripted)
    _, final, _ = await user_turn(runtime, text)
    assert final["activated_goals"], "the goal must be active for this test"
    assert final["search_text_source"] == "zu_wenig_verlauf"
    await deps.log.flush()  # type: ignore[union-attr]
    log_rows = [r for r in await read_turn(deps.pool, final["turn_id"]) if r["node"] == "enricher"]
    assert log_rows[-1]["inhalt"]["zielverschiebung"] is True
    assert log_rows[-1]["inhalt"]["cluster"] == "paradox"


async def test_enrich_hooks_bring_notes_and_later_appointments(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    from novaberg.agents.registry import discover_agents

    tz = deps.settings.tz
    now = datetime.fromtimestamp(NOW, tz=tz)
    await repository.insert(
        deps.pool,
        PAIR.user_id,
        title="Zahnarzt Kontrolle",
        event_time=now + timedelta(days=30),
        event_type="termin",
        details="",
        precision="minute",
        now=now,
    )
    async with deps.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO notizen (user_id, name, typ, text) VALUES (%s, %s, %s, %s)",
            (PAIR.user_id, "Einkaufsliste", "einkauf", "Milch, Brot"),
        )
    runtime = GraphRuntime(deps, discover_agents())
    script_human(scripted)
    script_character(scripted)
    _, final, _ = await user_turn(
        runtime, "Wann ist der Zahnarzt, und was steht auf der Einkaufsliste?"
    )
    texts = [e["inhalt"] for e in final["memory_entries_raw"]]
    assert any(t.startswith("Termin: ") and "Zahnarzt Kontrolle" in t for t in texts)
    assert "Notiz „Einkaufsliste“: Milch, Brot" in texts
    await deps.log.flush()  # type: ignore[union-attr]
    (row,) = [r for r in await read_turn(deps.pool, final["turn_id"]) if r["node"] == "enricher"][
        -1:
    ]
    assert row["inhalt"]["hooks"]["notizen"] == 1 and row["inhalt"]["hooks"]["timeline"] == 1


async def test_an_unusable_model_in_the_rewrite_ends_the_turn(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    from novaberg.llm.errors import ModelUnavailable

    script_human(scripted)
    script_character(scripted)
    await user_turn(runtime, "Ich ziehe nach Köln.")
    scripted.add(r"Suchanfrage für das Gedächtnis", fault="error")
    with pytest.raises(ModelUnavailable):
        await user_turn(runtime, "Und wann genau?")


async def test_the_stance_hash_is_replaced_whole_in_one_transaction(
    deps: GraphDeps, redis_trips: list[bytes]
) -> None:
    """The hash holds exactly the new fields (a stray old field is gone), written by one
    MULTI/EXEC in one round trip, so a concurrent reader never sees it empty."""
    state: Any = {
        "user_id": PAIR.user_id,
        "character_id": PAIR.character_id,
        "turn_id": "t-eins",
        "hypothesis_detail": {"cluster": None},
    }
    await stance_node(state, deps)
    await deps.redis.hset(keys.stance(PAIR), mapping={"alt": "x", "grund": "alt"})
    redis_trips.clear()
    await stance_node({**state, "turn_id": "t-zwei"}, deps)
    assert len(redis_trips) == 1 and b"MULTI" in redis_trips[0]
    stored = await deps.redis.hgetall(keys.stance(PAIR))
    assert stored == stance_hash(
        computed=False, cluster=None, turn_id="t-zwei", now=NOW, reason="kein_cluster"
    )


async def test_the_situation_is_stored_with_its_history_in_one_transaction(
    deps: GraphDeps, redis_trips: list[bytes]
) -> None:
    """Bubble and history entry, both with the TTL, by one MULTI/EXEC in one round trip;
    with no turn id only the bubble, by one SET."""
    bubble = {"gegenstand": "Umzug nach Köln"}
    await store_situation(deps.redis, PAIR, "t-null", bubble)
    redis_trips.clear()
    await store_situation(deps.redis, PAIR, "t-eins", SITUATION_BELLO)
    assert len(redis_trips) == 1 and b"MULTI" in redis_trips[0]
    data = json.dumps(SITUATION_BELLO, ensure_ascii=False)
    assert await deps.redis.get(keys.situation(PAIR)) == data
    history = keys.situation_history(PAIR)
    assert await deps.redis.hgetall(history) == {
        "t-null": json.dumps(bubble, ensure_ascii=False),
        "t-eins": data,
    }
    for key in (keys.situation(PAIR), history):
        assert SITUATION_TTL - 5 < await deps.redis.ttl(key) <= SITUATION_TTL
    redis_trips.clear()
    await store_situation(deps.redis, PAIR, "", bubble)
    assert len(redis_trips) == 1 and redis_trips[0].startswith(b"*5\r\n$3\r\nSET")
    assert json.loads(await deps.redis.get(keys.situation(PAIR))) == bubble
    assert len(await deps.redis.hgetall(history)) == 2
