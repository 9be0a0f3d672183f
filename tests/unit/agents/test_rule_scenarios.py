"""Acceptance scenarios 16–20 (spec agents.md §7): directives, identity, pending questions."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from agent_turns import NOW, last, run_turn

from novaberg.agents import rule_store
from novaberg.agents.pending import pending_question
from novaberg.graph.contract import GraphDeps
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import keys
from novaberg.store.tables import DIRECTIVES, IDENTITIES


def directive_as(scripted: ScriptedLLM, utterance: str, **output: Any) -> None:
    scripted.add(rf"Äußerung des Nutzers: {utterance}", output, schema="DirectiveClassification")


def identity_as(scripted: ScriptedLLM, utterance: str, **output: Any) -> None:
    scripted.add(rf"Äußerung des Nutzers: {utterance}", output, schema="IdentityClassification")


async def active_identities(pool, user_id: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return await rule_store.active(pool, IDENTITIES, user_id)


async def active_directives(pool, user_id: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return await rule_store.active(pool, DIRECTIVES, user_id)


async def table(deps: GraphDeps, name: str) -> list[dict[str, Any]]:
    async with deps.pool.connection() as conn:
        cur = await conn.execute(f"SELECT * FROM {name} ORDER BY id")
        return await cur.fetchall()


SCHATZ = "Den Nutzer nie Schatz nennen"


async def _ask_schatz(deps: GraphDeps, scripted: ScriptedLLM) -> dict[str, Any]:
    directive_as(scripted, "Nenn mich nie Schatz", action="create", anweisung=SCHATZ)
    out = await run_turn(deps, "Nenn mich nie Schatz", "direktiven")
    assert await table(deps, "direktiven") == []
    pending = await pending_question(deps.redis, "u1")
    assert pending is not None and pending["agent_name"] == "direktiven"
    assert "Soll ich das ausführen?" in pending["rueckfrage"]
    assert last(out).status == "rueckfrage"
    return out


async def test_s16_directive_confirmed(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await _ask_schatz(deps, scripted)
    out = await run_turn(deps, "Ja", action="resume")
    rows = await table(deps, "direktiven")
    assert len(rows) == 1 and rows[0]["aktiv"] and "Schatz" in rows[0]["anweisung"]
    assert last(out).status == "abgeschlossen"
    assert await pending_question(deps.redis, "u1") is None
    assert "Schatz" in rule_store.render_rule((await active_directives(deps.pool, "u1"))[0])


async def test_s16_directive_declined(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await _ask_schatz(deps, scripted)
    out = await run_turn(deps, "nein", action="resume")
    assert await table(deps, "direktiven") == []
    assert last(out).status == "dismissed"
    assert await pending_question(deps.redis, "u1") is None


async def test_s17_restore_inactive_directive(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    old_id = await rule_store.insert(deps.pool, "direktiven", "u1", "Den Nutzer immer siezen", NOW)
    await rule_store.set_active(deps.pool, "direktiven", "u1", [old_id], False, NOW)
    async with deps.pool.connection() as conn:
        await conn.execute("UPDATE direktiven SET geaendert_am = NULL")
    directive_as(scripted, "Sieze mich immer", action="create", anweisung="Den Nutzer immer siezen")
    out = await run_turn(deps, "Sieze mich immer", "direktiven")
    assert "wiederherstellen" in out["task_block"]
    await run_turn(deps, "ja", action="resume")
    rows = await table(deps, "direktiven")
    assert len(rows) == 1 and rows[0]["id"] == old_id
    assert rows[0]["aktiv"] is True and rows[0]["geaendert_am"] == NOW


async def test_restore_at_the_directive_limit_is_refused(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """A restore in the conversation counts like a create: at the limit Nova says so and
    the deleted rule stays deleted (it used to come back past the limit)."""
    deps = replace(deps, settings=deps.settings.model_copy(update={"max_directives": 1}))
    old_id = await rule_store.insert(deps.pool, "direktiven", "u1", "Den Nutzer immer siezen", NOW)
    await rule_store.set_active(deps.pool, "direktiven", "u1", [old_id], False, NOW)
    await rule_store.insert(deps.pool, "direktiven", "u1", SCHATZ, NOW)
    directive_as(scripted, "Sieze mich immer", action="create", anweisung="Den Nutzer immer siezen")
    out = await run_turn(deps, "Sieze mich immer", "direktiven")
    assert "wiederherstellen" in out["task_block"]
    out = await run_turn(deps, "ja", action="resume")
    assert last(out).status == "fehler" and "Es gibt schon 1 Direktiven" in last(out).error
    assert [r["anweisung"] for r in await active_directives(deps.pool, "u1")] == [SCHATZ]


async def test_similar_active_directive_asks(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await rule_store.insert(deps.pool, "direktiven", "u1", SCHATZ, NOW)
    directive_as(scripted, "Sag nie Schatz", action="create", anweisung="nie Schatz nennen")
    out = await run_turn(deps, "Sag nie Schatz zu mir", "direktiven")
    assert "ähnliche Direktive" in out["task_block"]
    await run_turn(deps, "nein danke", action="resume")
    assert len(await table(deps, "direktiven")) == 1


async def test_directive_delete_choice_then_gate(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    a = await rule_store.insert(deps.pool, "direktiven", "u1", "Nicht über Fußball reden", NOW)
    b = await rule_store.insert(deps.pool, "direktiven", "u1", "Nicht über Politik reden", NOW)
    directive_as(scripted, "Du darfst wieder", action="delete", anweisung="reden")
    out = await run_turn(deps, "Du darfst wieder über alles reden", "direktiven")
    assert "Fußball" in out["task_block"] and "Politik" in out["task_block"]
    out = await run_turn(deps, "Politik", action="resume")
    assert "Soll ich das ausführen?" in out["task_block"] and "Politik" in out["task_block"]
    await run_turn(deps, "ja", action="resume")
    states = {r["id"]: r["aktiv"] for r in await table(deps, "direktiven")}
    assert states == {a: True, b: False}


async def test_directive_read(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await rule_store.insert(deps.pool, "direktiven", "u1", SCHATZ, NOW, "Kosenamen")
    directive_as(scripted, "Welche Regeln", action="read")
    out = await run_turn(deps, "Welche Regeln hast du?", "direktiven")
    assert "Schatz" in out["task_block"] and "(Kosenamen)" in out["task_block"]
    assert await pending_question(deps.redis, "u1") is None


MAEDEL = "Ein freches Mädel vom Land"


async def _ask_maedel(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    identity_as(scripted, "Du bist ab jetzt", action="create", anweisung=MAEDEL)
    out = await run_turn(
        deps, "Du bist ab jetzt ein freches Mädel vom Land", "charakter_identitaet"
    )
    assert last(out).status == "rueckfrage"
    assert await table(deps, "charakter_anweisungen") == []


async def test_s18_identity_declined(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await _ask_maedel(deps, scripted)
    out = await run_turn(deps, "nein", action="resume")
    assert await table(deps, "charakter_anweisungen") == []
    assert last(out).status == "dismissed"
    assert "nichts geändert" in out["task_block"]


async def test_s18_identity_ja_gerne_creates(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await _ask_maedel(deps, scripted)
    await run_turn(deps, "Ja, gerne", action="resume")
    rows = await active_identities(deps.pool, "u1")
    assert [r["anweisung"] for r in rows] == [MAEDEL]


async def test_s19_unclear_answer_reasks_once_then_expires(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    await _ask_maedel(deps, scripted)
    before = await pending_question(deps.redis, "u1")
    out = await run_turn(deps, "vielleicht", action="resume")
    assert len(out["agent_results"]) == 1  # one agent run, then the turn ends
    after = await pending_question(deps.redis, "u1")
    assert after is not None and after["rueckfrage"] == before["rueckfrage"]
    assert before["rueckfrage"] in out["task_block"]
    assert 0 < await deps.redis.ttl(keys.pending_agent("u1")) <= 300
    # 300 s of silence: the key expires (simulated by shortening its TTL).
    await deps.redis.pexpire(keys.pending_agent("u1"), 1)
    await asyncio.sleep(0.05)
    assert await pending_question(deps.redis, "u1") is None
    out = await run_turn(deps, "ja", action="resume")  # a stale resume hands back
    assert out["agent_results"] == [] and out["management_action"] == ""
    assert await table(deps, "charakter_anweisungen") == []


async def test_s20_impulse_never_consumes_pending(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await _ask_maedel(deps, scripted)
    before = await deps.redis.get(keys.pending_agent("u1"))
    impulse = {
        "user_prompt": "",
        "own_thought": "Ich frage mich, wie es dem Nutzer geht.",
        "event_payload": {"reiz_herkunft": "eigener_impuls", "gedanke_arousal": 0.4},
    }
    for action in ("", "resume"):  # the router never resumes on an impulse; defend anyway
        out = await run_turn(deps, "", action=action, **impulse)
        assert out["agent_results"] == []
        assert await deps.redis.get(keys.pending_agent("u1")) == before
    await run_turn(deps, "ja", action="resume")
    assert await pending_question(deps.redis, "u1") is None
    assert len(await active_identities(deps.pool, "u1")) == 1


async def test_identity_consolidation_beyond_three(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    ids = [
        await rule_store.insert(deps.pool, "charakter_anweisungen", "u1", text, NOW)
        for text in ("Eine Piratin", "Sehr höflich", "Liebt Katzen")
    ]
    identity_as(scripted, "Du bist jetzt auch", action="create", anweisung="Eine Köchin")
    out = await run_turn(deps, "Du bist jetzt auch eine Köchin", "charakter_identitaet")
    assert "zusammenführen" in out["task_block"] and "Piratin" in out["task_block"]
    await run_turn(deps, "ersetz die Piratin", action="resume")
    rows = await active_identities(deps.pool, "u1")
    assert sorted(r["anweisung"] for r in rows) == ["Eine Köchin", "Liebt Katzen", "Sehr höflich"]
    assert ids[0] not in {r["id"] for r in rows}


async def test_identity_reset_deletes_all(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    for text in ("Eine Piratin", "Sehr höflich"):
        await rule_store.insert(deps.pool, "charakter_anweisungen", "u1", text, NOW)
    identity_as(scripted, "Sei wieder normal", action="delete_alle")
    await run_turn(deps, "Sei wieder normal", "charakter_identitaet")
    assert len(await active_identities(deps.pool, "u1")) == 2  # gate first
    await run_turn(deps, "ok", action="resume")
    assert await active_identities(deps.pool, "u1") == []


async def test_identity_consolidation_merge(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    for text in ("Eine Piratin", "Sehr höflich", "Liebt Katzen"):
        await rule_store.insert(deps.pool, "charakter_anweisungen", "u1", text, NOW)
    identity_as(scripted, "Du bist jetzt auch", action="create", anweisung="Eine Köchin")
    scripted.add(
        r"Neue Anweisung: Eine Köchin",
        {"anweisung": "Eine höfliche Piratenköchin mit Katze"},
        schema="IdentityMerge",
    )
    await run_turn(deps, "Du bist jetzt auch eine Köchin", "charakter_identitaet")
    out = await run_turn(deps, "fass alles zusammen", action="resume")
    assert last(out).status == "abgeschlossen"
    rows = await active_identities(deps.pool, "u1")
    assert [r["anweisung"] for r in rows] == ["Eine höfliche Piratenköchin mit Katze"]


async def test_replace_is_one_transaction(deps: GraphDeps) -> None:
    """Update = deactivate + insert; an insert that fails leaves the old rule active."""
    old_id = await rule_store.insert(deps.pool, "direktiven", "u1", SCHATZ, NOW)
    new_id = await rule_store.replace(deps.pool, "direktiven", "u1", [old_id], "Duzen", NOW)
    rows = {row["id"]: row for row in await table(deps, "direktiven")}
    assert not rows[old_id]["aktiv"] and rows[new_id]["aktiv"]
    assert rows[new_id]["anweisung"] == "Duzen"

    failing = None  # violates `anweisung TEXT NOT NULL` after the deactivation ran
    try:
        await rule_store.replace(deps.pool, "direktiven", "u1", [new_id], failing, NOW)  # type: ignore[arg-type]
    except Exception as exc:  # psycopg.errors.NotNullViolation
        assert "null value" in str(exc)
    else:
        raise AssertionError("an insert of NULL must fail")
    rows = {row["id"]: row for row in await table(deps, "direktiven")}
    assert rows[new_id]["aktiv"] and len(rows) == 2
