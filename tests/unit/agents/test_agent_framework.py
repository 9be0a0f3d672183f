"""Agent framework: result validation, discovery, planner ⇄ agent_dispatch loop, pending."""

from __future__ import annotations

import json
from functools import partial
from typing import Any, get_args

import pytest
from langgraph.graph import END, START, StateGraph

from novaberg.agents.base import AgentDefinitionError, AgentResult, Correction
from novaberg.agents.dispatch_common import default_dispatch
from novaberg.agents.markers import session_marker
from novaberg.agents.pending import has_pending, pending_question, store_pending
from novaberg.agents.registry import AgentRegistry, agent_migrations, discover_agents
from novaberg.agents.task_block import build_task_block
from novaberg.graph.contract import ANSWER_JOIN, GraphDeps
from novaberg.graph.nodes.agent_dispatch import agent_dispatch
from novaberg.graph.nodes.planner import planner, route_after_planner
from novaberg.graph.state import ConversationState
from novaberg.store import keys

FAKES = "fakeagents"


def fake_registry() -> AgentRegistry:
    return discover_agents(package=FAKES)


def build_loop(deps: GraphDeps, registry: AgentRegistry) -> Any:
    """planner ⇄ agent_dispatch exactly as the CharacterGraph wires them."""
    graph = StateGraph(ConversationState)
    graph.add_node("planner", partial(planner, deps=deps, registry=registry))
    graph.add_node("agent_dispatch", partial(agent_dispatch, deps=deps, registry=registry))

    async def join(state: ConversationState) -> dict[str, Any]:
        return {}

    graph.add_node(ANSWER_JOIN, join)
    graph.add_edge(START, "planner")
    graph.add_conditional_edges("planner", route_after_planner)
    graph.add_edge("agent_dispatch", "planner")
    graph.add_edge(ANSWER_JOIN, END)
    return graph.compile()


def turn(text: str, action: str = "agent", target: str = "echo", **extra: Any) -> dict[str, Any]:
    return {
        "user_id": "u1",
        "character_id": "nova",
        "user_prompt": text,
        "management_action": action,
        "management_target": target,
        "agent_results": [],
        "agent_name": "",
        "event_payload": {"reiz_herkunft": "nutzer_turn"},
        **extra,
    }


# --- types ---------------------------------------------------------------------------


def test_result_validates_status_and_required_fields() -> None:
    with pytest.raises(AgentDefinitionError):
        AgentResult("x", None, "fertig")
    with pytest.raises(AgentDefinitionError):
        AgentResult("x", None, "fehler")
    with pytest.raises(AgentDefinitionError):
        AgentResult("x", None, "rueckfrage")
    with pytest.raises(AgentDefinitionError):
        AgentResult("x", None, "abgelehnt")
    with pytest.raises(AgentDefinitionError):
        Correction("befund", "beleg", "")
    ok = AgentResult("x", None, "abgelehnt", correction=Correction("b", "c", "v"))
    assert AgentResult.coerce(ok.to_dict()) == ok


def test_discovery_needs_agent_md_and_skips_underscore(caplog: pytest.LogCaptureFixture) -> None:
    registry = fake_registry()
    assert set(registry.all()) == {"echo"}
    assert "agent folder nodoc refused: AGENT.md is missing" in caplog.text
    assert "hidden" not in caplog.text  # skipped without a word, not refused
    assert registry.get_dispatch("echo") is default_dispatch  # a folder without dispatch.py
    assert "Test agent" in registry.descriptions()
    assert registry.match_target("ECHO") == "echo"
    assert registry.match_target("echo_alias") == "echo"
    assert registry.match_target("") is None


def test_agent_migrations_are_named_per_folder() -> None:
    names = [m.name for m in agent_migrations(FAKES)]
    assert names == ["agent_echo_schema.sql"]


def test_real_agents_discovered() -> None:
    registry = discover_agents()
    assert {"notizen", "timeline", "direktiven", "charakter_identitaet"} <= set(registry.all())
    for name in registry.all():
        assert registry.get_dispatch(name) is not None, name
    assert registry.get_dispatch("timeline") is not default_dispatch  # its own dispatch.py


def test_capabilities_are_what_classify_can_choose() -> None:
    """An agent's capabilities (spec §1.1 `faehigkeiten`) come from its domain language;
    each is an action its classification may return or one the agent derives itself."""
    from novaberg.agents.character_identity.classify import IdentityClassification
    from novaberg.agents.directives.classify import DirectiveClassification
    from novaberg.agents.notes.classify import NotesClassification
    from novaberg.agents.timeline.classify import TimelineClassification

    schemas = {
        "notizen": NotesClassification,
        "timeline": TimelineClassification,
        "direktiven": DirectiveClassification,
        "charakter_identitaet": IdentityClassification,
    }
    derived = {"charakter_identitaet": {"konsolidieren"}}
    without_model = {
        "recherche": {"recherchieren"},
        "delegation": {"uebernehmen"},
        "dateien_wurzeln": {"freigeben", "widerrufen"},
    }
    """Agents whose classify needs no model (the matter comes with a promise, a folder
    request is read from its words): what it sets."""
    for name, agent in discover_agents().all().items():
        if name in without_model:
            choosable = without_model[name]
        else:
            choosable = set(get_args(schemas[name].model_fields["action"].annotation))
            choosable -= {"rejected"}
        assert set(agent.capabilities) == choosable | derived.get(name, set()), name
        assert list(agent.domain_language["aktionen"]) == [
            action for action in agent.capabilities if action in choosable
        ], name
    assert fake_registry().find("echo").capabilities == []  # type: ignore[union-attr]


# --- planner without agents ----------------------------------------------------------


async def test_planner_without_agents_hands_back(deps: GraphDeps) -> None:
    out = await build_loop(deps, AgentRegistry()).ainvoke(turn("Schreib auf: Milch"))
    assert out["agent_name"] == ""
    assert out["management_action"] == ""
    assert out["task_block"] == ""
    assert out["task_context_cut"] is False
    assert out["agent_results"] == []


async def test_planner_no_action_is_noop(deps: GraphDeps) -> None:
    assert await planner(turn("hi", action=""), deps, fake_registry()) == {"agent_name": ""}
    assert route_after_planner({"agent_name": ""}) == ANSWER_JOIN
    assert route_after_planner({"agent_name": "echo"}) == "agent_dispatch"


# --- loop ---------------------------------------------------------------------------------


async def test_done_runs_once_and_writes_task_block(deps: GraphDeps) -> None:
    out = await build_loop(deps, fake_registry()).ainvoke(turn("hallo"))
    assert [r.status for r in out["agent_results"]] == ["abgeschlossen"]
    assert "echo: hallo" in out["task_block"]
    assert out["task_context_cut"] is True
    assert session_marker(out["agent_results"]) == "[ERLEDIGT]"


async def test_question_stores_pending_and_resume_consumes_it(deps: GraphDeps) -> None:
    loop = build_loop(deps, fake_registry())
    out = await loop.ainvoke(turn("frag mich"))
    assert out["agent_results"][-1].status == "rueckfrage"
    assert "Wirklich?" in out["task_block"] and out["task_context_cut"] is False
    pending = await pending_question(deps.redis, "u1")
    assert pending is not None and pending["agent_name"] == "echo"
    assert 0 < await deps.redis.ttl(keys.pending_agent("u1")) <= 300
    assert session_marker(out["agent_results"]) is None

    out = await loop.ainvoke(turn("ja", action="resume", target=""))
    assert [r.status for r in out["agent_results"]] == ["abgeschlossen"]
    assert out["agent_results"][0].meta["resume"] is True
    assert await pending_question(deps.redis, "u1") is None


async def test_loop_guard_agent_asking_twice_ends_turn_with_question(deps: GraphDeps) -> None:
    loop = build_loop(deps, fake_registry())
    await loop.ainvoke(turn("frag mich immer"))
    out = await loop.ainvoke(turn("vielleicht", action="resume", target=""))
    assert [r.status for r in out["agent_results"]] == ["rueckfrage"]  # exactly one run
    assert "Wirklich?" in out["task_block"]
    pending = await pending_question(deps.redis, "u1")
    assert pending is not None and pending["rueckfrage"] == "Wirklich?"


async def test_exception_becomes_fehler_result(deps: GraphDeps) -> None:
    out = await build_loop(deps, fake_registry()).ainvoke(turn("kaputt"))
    result = out["agent_results"][-1]
    assert result.status == "fehler" and "RuntimeError" in result.error
    assert "fehlgeschlagen" in out["task_block"]
    assert session_marker(out["agent_results"]) == "[FEHLGESCHLAGEN]"


async def test_missing_dispatch_becomes_fehler(deps: GraphDeps) -> None:
    registry = fake_registry()
    registry._dispatch.clear()
    update = await agent_dispatch(turn("x", agent_name="echo"), deps, registry)
    assert update["agent_results"][-1].status == "fehler"
    assert update["agent_name"] == ""


async def test_rejected_becomes_abgelehnt_with_korrektur(deps: GraphDeps) -> None:
    out = await build_loop(deps, fake_registry()).ainvoke(turn("quatsch"))
    result = out["agent_results"][-1]
    assert result.status == "abgelehnt"
    assert result.correction.suggestion
    assert "kein_auftrag" in result.correction.evidence
    assert await pending_question(deps.redis, "u1") is None


async def test_resume_without_pending_hands_back(deps: GraphDeps) -> None:
    out = await build_loop(deps, fake_registry()).ainvoke(turn("ja", action="resume", target=""))
    assert out["agent_results"] == [] and out["management_action"] == ""


async def test_intent_selects_agent(deps: GraphDeps) -> None:
    from novaberg.graph.personality import Personality

    external = Personality()
    external.emotion.intent = "echo_management"
    update = await planner(turn("x", target="unbekannt", external=external), deps, fake_registry())
    assert update["agent_name"] == "echo"


# --- pending helpers and task block ------------------------------------------------------


async def test_pending_roundtrip_and_unreadable(deps: GraphDeps) -> None:
    await store_pending(
        deps.redis, "u1", agent_name="a", action="agent", target="t", rueckfrage="?", parameter={}
    )
    assert await has_pending(deps.redis, "u1")
    assert (await pending_question(deps.redis, "u1"))["target"] == "t"
    await deps.redis.set(keys.pending_agent("u1"), "{kaputt")
    assert await pending_question(deps.redis, "u1") is None


def test_task_block_priorities() -> None:
    done = AgentResult("notizen", "Notiz angelegt", "abgeschlossen")
    question = AgentResult(
        "notizen",
        None,
        "rueckfrage",
        question=json.dumps(
            {
                "typ": "disambiguierung",
                "kandidaten": [
                    {"id": 1, "name": "Einkaufsliste Rewe"},
                    {"id": 2, "name": "Einkaufsliste Aldi"},
                ],
            }
        ),
    )
    block, cut = build_task_block([question])
    assert "Rewe" in block and "Aldi" in block and cut is False
    block, cut = build_task_block([done])
    assert "notizen: Notiz angelegt" in block and cut is True
    block, cut = build_task_block([AgentResult("d", "x", "dismissed")])
    assert "nichts geändert" in block and cut is True
    assert build_task_block([]) == ("", False)
    assert build_task_block([], "legacy")[0].endswith("- legacy")


def test_history_lines_use_the_numbered_view() -> None:
    from novaberg.agents.dispatch_common import history_lines

    turns = [
        {"rolle": "user", "inhalt": "Milch, Eier, Butter", "emotion": "neutral"},
        {"rolle": "assistant", "inhalt": "Soll ich das aufschreiben?"},
    ]
    assert history_lines({"session_turns": turns}) == [
        "[1] USER (neutral): Milch, Eier, Butter",
        "[2] NOVA: Soll ich das aufschreiben?",
    ]
    assert history_lines({}) == []
