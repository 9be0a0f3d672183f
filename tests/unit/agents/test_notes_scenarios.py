"""Acceptance scenarios 1–8 (spec agents.md §7) for the notes agent, plus verification."""

from __future__ import annotations

import json
from typing import Any

from agent_turns import NOW, last, run_turn

from novaberg.agents.markers import session_marker
from novaberg.agents.notes import repository as repo
from novaberg.agents.pending import pending_question
from novaberg.graph.contract import GraphDeps
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import keys

CLS = "NotesClassification"


def classify_as(scripted: ScriptedLLM, utterance: str, **output: Any) -> None:
    scripted.add(rf"Äußerung des Nutzers: {utterance}", {"target": "", **output}, schema=CLS)


async def note(deps: GraphDeps, name: str, text: str, typ: str = "einkauf") -> int:
    return await repo.insert(deps.pool, "u1", name=name, typ=typ, text=text, themen=[], now=NOW)


async def all_notes(deps: GraphDeps) -> list[dict[str, Any]]:
    async with deps.pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM notizen ORDER BY id")
        return await cur.fetchall()


async def test_s1_write_down_creates_one_note(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    classify_as(
        scripted,
        "Schreib auf: Milch, Eier, Butter",
        action="create",
        elemente=["Milch", "Eier", "Butter"],
        normalisiert="create: Notiz mit Milch, Eier, Butter",
    )
    scripted.add(
        r"Anweisung: create",
        {"name": "Einkaufsliste", "typ": "einkauf", "text": "Milch, Eier, Butter", "themen": []},
        schema="NoteDraft",
    )
    out = await run_turn(deps, "Schreib auf: Milch, Eier, Butter", "notizen")
    rows = await all_notes(deps)
    assert len(rows) == 1 and rows[0]["aktiv"]
    assert all(item in rows[0]["text"] for item in ("Milch", "Eier", "Butter"))
    assert rows[0]["wiedervorlage_am"] > rows[0]["created_at"]
    assert await pending_question(deps.redis, "u1") is None
    assert last(out).status == "abgeschlossen"
    assert session_marker(out["agent_results"]) == "[ERLEDIGT]"


async def test_s2_strike_item_keeps_note(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    note_id = await note(deps, "Einkaufsliste", "Milch, Eier, Brot")
    classify_as(
        scripted,
        "Streich die Milch",
        action="remove_content",
        target="Einkaufsliste",
        elemente=["Milch"],
    )
    out = await run_turn(deps, "Streich die Milch von der Einkaufsliste", "notizen")
    row = await repo.get(deps.pool, "u1", note_id)
    assert last(out).status == "abgeschlossen"
    assert row["aktiv"] and "Milch" not in row["text"]
    assert "Eier" in row["text"] and "Brot" in row["text"]
    assert len(await all_notes(deps)) == 1


async def test_s3_delete_archives(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    note_id = await note(deps, "Einkaufsliste", "Milch, Eier, Brot")
    classify_as(scripted, "Lösch die Einkaufsliste", action="delete", target="Einkaufsliste")
    await run_turn(deps, "Lösch die Einkaufsliste", "notizen")
    row = await repo.get(deps.pool, "u1", note_id)
    assert row is not None and row["aktiv"] is False and row["status"] == "archiviert"


async def test_s4_clear_empties(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    note_id = await note(deps, "Einkaufsliste", "Milch, Eier, Brot")
    classify_as(scripted, "Leere die Einkaufsliste", action="clear_content", target="Einkaufsliste")
    await run_turn(deps, "Leere die Einkaufsliste", "notizen")
    row = await repo.get(deps.pool, "u1", note_id)
    assert row["aktiv"] is True and row["text"] == "" and row["zusammenfassung"] == "(leer)"


def _add_kuemmel(scripted: ScriptedLLM) -> None:
    classify_as(
        scripted,
        "Setz Kümmel",
        action="add_content",
        target="Einkaufsliste",
        elemente=["Kümmel"],
    )


async def test_s5_missing_list_asks_then_creates(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    _add_kuemmel(scripted)
    out = await run_turn(deps, "Setz Kümmel auf die Einkaufsliste", "notizen")
    assert await all_notes(deps) == []
    pending = await pending_question(deps.redis, "u1")
    assert pending is not None and pending["agent_name"] == "notizen"
    assert json.loads(pending["rueckfrage"])["typ"] == "nicht_gefunden"
    assert 0 < await deps.redis.ttl(keys.pending_agent("u1")) <= 300
    assert "Soll ich sie anlegen?" in out["task_block"] and not out["task_context_cut"]
    assert "nichts anderes" in out["task_block"]

    out = await run_turn(deps, "ja, bitte", action="resume")
    rows = await all_notes(deps)
    assert len(rows) == 1 and rows[0]["name"] == "Einkaufsliste" and rows[0]["text"] == "Kümmel"
    assert await pending_question(deps.redis, "u1") is None
    assert last(out).status == "abgeschlossen"


async def test_s6_missing_list_declined(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    _add_kuemmel(scripted)
    await run_turn(deps, "Setz Kümmel auf die Einkaufsliste", "notizen")
    out = await run_turn(deps, "nein", action="resume")
    assert await all_notes(deps) == []
    assert await pending_question(deps.redis, "u1") is None
    assert last(out).status == "dismissed"
    assert "nichts geändert" in out["task_block"]


async def test_s7_disambiguation_then_second(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    rewe = await note(deps, "Einkaufsliste Rewe", "Milch")
    aldi = await note(deps, "Einkaufsliste Aldi", "Brot")
    classify_as(scripted, "Lösch die Einkaufsliste", action="delete", target="Einkaufsliste")
    out = await run_turn(deps, "Lösch die Einkaufsliste", "notizen")
    assert last(out).status == "rueckfrage"
    assert "Einkaufsliste Rewe" in out["task_block"] and "Einkaufsliste Aldi" in out["task_block"]
    assert all(r["aktiv"] for r in await all_notes(deps))
    pending = await pending_question(deps.redis, "u1")
    second = json.loads(pending["rueckfrage"])["kandidaten"][1]["id"]

    await run_turn(deps, "die zweite", action="resume")
    states = {r["id"]: r["aktiv"] for r in await all_notes(deps)}
    assert states[second] is False
    assert [i for i in (rewe, aldi) if states[i]] == [i for i in (rewe, aldi) if i != second]
    assert await pending_question(deps.redis, "u1") is None


async def test_s8_read_lists_items_without_write(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    note_id = await note(deps, "Einkaufsliste", "Milch, Eier, Brot")
    before = await repo.get(deps.pool, "u1", note_id)
    classify_as(scripted, "Was steht auf meiner", action="read", target="Einkaufsliste")
    out = await run_turn(deps, "Was steht auf meiner Einkaufsliste?", "notizen")
    assert last(out).status == "abgeschlossen"
    assert all(i in out["task_block"] for i in ("Milch", "Eier", "Brot"))
    assert await repo.get(deps.pool, "u1", note_id) == before


async def test_verification_failure_is_reported(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    """A write the re-read does not show becomes a failure the user is told about."""
    await note(deps, "Einkaufsliste", "Milch, Eier, Brot")
    classify_as(scripted, "Leere die Einkaufsliste", action="clear_content", target="Einkaufsliste")
    async with deps.pool.connection() as conn:
        await conn.execute(
            "CREATE OR REPLACE FUNCTION test_freeze_text() RETURNS trigger AS $$"
            " BEGIN NEW.text := OLD.text; RETURN NEW; END $$ LANGUAGE plpgsql"
        )
        await conn.execute(
            "CREATE TRIGGER test_freeze BEFORE UPDATE ON notizen"
            " FOR EACH ROW EXECUTE FUNCTION test_freeze_text()"
        )
    try:
        out = await run_turn(deps, "Leere die Einkaufsliste", "notizen")
    finally:
        async with deps.pool.connection() as conn:
            await conn.execute("DROP TRIGGER test_freeze ON notizen")
    result = last(out)
    assert result.status == "fehler" and "nicht bestätigen" in result.error
    assert any(s.get("verifiziert") is False for s in result.steps)
    assert "fehlgeschlagen" in out["task_block"]
    assert session_marker(out["agent_results"]) == "[FEHLGESCHLAGEN]"


async def test_duplicate_name_asks_update_or_new(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    note_id = await note(deps, "Einkaufsliste", "Milch")
    classify_as(
        scripted,
        "Mach eine Einkaufsliste",
        action="create",
        target="Einkaufsliste",
        elemente=["Käse"],
        normalisiert="create: Einkaufsliste mit Käse",
    )
    scripted.add(
        r"Anweisung: create",
        {"name": "Einkaufsliste", "typ": "einkauf", "text": "Käse", "themen": []},
        schema="NoteDraft",
    )
    out = await run_turn(deps, "Mach eine Einkaufsliste mit Käse", "notizen")
    assert "bereits eine Notiz" in out["task_block"]
    out = await run_turn(deps, "vielleicht", action="resume")
    assert last(out).status == "rueckfrage"  # unclear → same question again
    await run_turn(deps, "aktualisier die alte", action="resume")
    rows = await all_notes(deps)
    assert len(rows) == 1 and rows[0]["id"] == note_id and rows[0]["text"] == "Milch, Käse"


async def test_rejected_utterance_changes_nothing(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    classify_as(scripted, "Schönes Wetter", action="rejected", grund="keine_aufgabe")
    out = await run_turn(deps, "Schönes Wetter heute", "notizen")
    assert last(out).status == "abgelehnt" and last(out).correction.suggestion
    assert await all_notes(deps) == []


async def test_add_to_existing_list(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    note_id = await note(deps, "Einkaufsliste", "Milch, Eier, Brot")
    _add_kuemmel(scripted)
    out = await run_turn(deps, "Setz Kümmel auf die Einkaufsliste", "notizen")
    assert last(out).status == "abgeschlossen"
    assert (await repo.get(deps.pool, "u1", note_id))["text"] == "Milch, Eier, Brot, Kümmel"


async def test_update_rewrites_through_the_model(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    note_id = await note(deps, "Einkaufsliste", "Milch, Eier, Brot")
    classify_as(
        scripted,
        "Ändere die Einkaufsliste",
        action="update",
        target="Einkaufsliste",
        normalisiert="update: Brot durch Brötchen ersetzen",
    )
    scripted.add(r"Notiz: Einkaufsliste", {"text": "Milch, Eier, Brötchen"}, schema="NoteRewrite")
    out = await run_turn(deps, "Ändere die Einkaufsliste: statt Brot Brötchen", "notizen")
    assert last(out).status == "abgeschlossen"
    assert (await repo.get(deps.pool, "u1", note_id))["text"] == "Milch, Eier, Brötchen"
    rewrite = next(c for c in scripted.calls if c["schema"] == "NoteRewrite")
    assert "Milch, Eier, Brot" in rewrite["prompt"] and "Brötchen ersetzen" in rewrite["prompt"]


async def test_rename(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    note_id = await note(deps, "Einkaufsliste", "Milch")
    classify_as(
        scripted,
        "Nenn die Einkaufsliste",
        action="rename",
        target="Einkaufsliste",
        neuer_name="Wocheneinkauf",
    )
    await run_turn(deps, "Nenn die Einkaufsliste Wocheneinkauf", "notizen")
    assert (await repo.get(deps.pool, "u1", note_id))["name"] == "Wocheneinkauf"


async def test_model_failure_is_a_fault_not_a_guess(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    scripted.add(r"Äußerung des Nutzers", fault="malformed", schema=CLS)
    out = await run_turn(deps, "Schreib auf: Milch", "notizen")
    assert last(out).status == "fehler"
    assert await all_notes(deps) == []


async def test_append_after_choosing_a_note_appends_the_utterance_not_the_answer(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    await note(deps, "Ideen Urlaub", "Berge", typ="idee")
    second = await note(deps, "Ideen Geschenke", "Buch", typ="idee")
    said = "Häng an die Ideen: Kochkurs für Mama"
    classify_as(scripted, said, action="append", target="Ideen")
    out = await run_turn(deps, said, "notizen")
    assert last(out).status == "rueckfrage"

    await run_turn(deps, "die zweite", action="resume")
    texts = {r["id"]: r["text"] for r in await all_notes(deps)}
    assert texts[second] == f"Buch\n{said}"
    assert "die zweite" not in "".join(texts.values())


async def test_approving_a_missing_note_keeps_the_item_without_listed_elements(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """Spec §3.1 resume: the created note holds the item; with no elements from the
    classifier it is drafted from the original utterance, not from the answer "ja"."""
    said = "Setz Zimt auf den Backzettel"
    classify_as(scripted, said, action="add_content", target="Backzettel")
    await run_turn(deps, said, "notizen")
    scripted.add(
        rf"Original: {said}",
        {"name": "egal", "typ": "einkauf", "text": "Zimt", "themen": []},
        schema="NoteDraft",
    )
    out = await run_turn(deps, "ja", action="resume")
    rows = await all_notes(deps)
    assert len(rows) == 1 and rows[0]["name"] == "Backzettel" and rows[0]["text"] == "Zimt"
    assert last(out).status == "abgeschlossen"
