"""Research through the thinker's search provider (≤ 3 rounds) or from memory without one,
both leaving a stack entry and a short-term memory of Nova's; knowledge gaps researched;
knowledge the promotion brought back turned into a stack entry."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "graph"))
from searxng_double import SearxngDouble, searxng_server

from novaberg.impulses import shadow_queue
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.jobs import GAP_LEAD
from novaberg.impulses.shadow_queue import ShadowTask
from novaberg.memory.long_term.promotion import Promotion
from novaberg.pair import Pair
from novaberg.pixie.jobs import build_scheduler
from novaberg.pixie.research import MAX_ROUNDS, NO_PROVIDER_MARK
from novaberg.store.session import append_turn
from novaberg.store.short_term import ShortTermStore
from novaberg.websearch import SearxngProvider

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
PAIR = Pair("anna", "nova")
HITS = [
    {
        "url": "http://127.0.0.1:1/reha",
        "title": "Reha nach Schlaganfall",
        "content": "Die meisten Fortschritte gibt es in den ersten sechs Monaten.",
    }
]
NOTE = "Die ersten sechs Monate Reha bringen die größten Fortschritte."


def task(kind: str, topic: str = "Reha", **extra: Any) -> ShadowTask:
    return ShadowTask(
        user_id="anna",
        character_id="nova",
        task=kind,
        topic=topic,
        context="Wie lange dauert die Reha nach einem Schlaganfall?",
        **extra,
    )


async def _row(db, row_id: int) -> dict[str, Any] | None:  # type: ignore[no-untyped-def]
    async with db.connection() as conn:
        cur = await conn.execute("SELECT * FROM shadow_auftrag WHERE id = %s", (row_id,))
        return await cur.fetchone()  # type: ignore[no-any-return]


async def _calm_user(redis) -> None:  # type: ignore[no-untyped-def]
    await append_turn(
        redis,
        PAIR,
        {"rolle": "user", "inhalt": "…", "emotion": "neutral", "emotions_vektor": "plateau",
         "modus": "alltag"},
    )  # fmt: skip


async def _own_memories(redis) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    return [e.fields for e in await ShortTermStore(redis).entries(PAIR)]


def scheduler_for(redis, db, model, web: Any = None):  # type: ignore[no-untyped-def]
    return build_scheduler(redis, db, model, clock=lambda: NOW.timestamp(), web=web)


async def test_research_searches_at_most_three_rounds_then_stores_entry_and_memory(
    redis, db, model, scripted
) -> None:  # type: ignore[no-untyped-def]
    await _calm_user(redis)
    scripted.add(".*", {"ergebnis": "SUCHE", "anfrage": "Reha Dauer"}, schema="ResearchStep")
    scripted.add(
        r"RUNDE 2", {"ergebnis": "SUCHE", "anfrage": "Reha Fortschritte"}, schema="ResearchStep"
    )
    scripted.add(r"Letzte Runde", {"ergebnis": "NOTIZ", "notiz": NOTE}, schema="ResearchStep")
    row_id, _ = await shadow_queue.push(db, task("recherche", reference_id="t-9"), NOW)
    with searxng_server(SearxngDouble(results=HITS)) as double:
        scheduler = scheduler_for(redis, db, model, SearxngProvider(double.base_url))
        result = await scheduler.run_now("recherche")
    assert result.status == "ran", result.error
    assert double.queries() == [
        "Reha Wie lange dauert die Reha nach einem Schlaganfall?",
        "Reha Dauer",
        "Reha Fortschritte",
    ]
    assert result.detail is not None and result.detail["suchrunden"] == MAX_ROUNDS
    assert result.detail["quelle"] == "websuche"
    [entry] = await impulse_stack.entries(redis, PAIR)
    assert entry.aufgabe == "recherche" and NOTE in entry.inhalt
    assert "Websuche: http://127.0.0.1:1/reha" in entry.inhalt
    assert NO_PROVIDER_MARK not in entry.inhalt
    assert entry.ausloeser_turn_id == "t-9"
    [memory] = await _own_memories(redis)
    assert memory["beobachter"] == "assistant" and memory["quelle"] == "recherche"
    assert NOTE in memory["inhalt"] and memory["turn_id"] == f"recherche-{row_id}"
    assert memory["salienz_eingang"] == repr(0.7)
    assert await _row(db, row_id) is None


async def test_a_research_without_a_note_stops_after_three_rounds_and_counts_a_failure(
    redis, db, model, scripted
) -> None:  # type: ignore[no-untyped-def]
    await _calm_user(redis)
    scripted.add(".*", {"ergebnis": "SUCHE", "anfrage": "noch mehr"}, schema="ResearchStep")
    row_id, _ = await shadow_queue.push(db, task("recherche"), NOW)
    with searxng_server(SearxngDouble(results=HITS)) as double:
        result = await scheduler_for(redis, db, model, SearxngProvider(double.base_url)).run_now(
            "recherche"
        )
    assert result.status == "failed"
    assert len(double.queries()) == MAX_ROUNDS
    row = await _row(db, row_id)
    assert row is not None and row["versuche"] == 1
    assert await impulse_stack.size(redis, PAIR) == 0 and await _own_memories(redis) == []


async def test_a_search_provider_error_fails_the_task_instead_of_faking_a_result(
    redis, db, model, scripted
) -> None:  # type: ignore[no-untyped-def]
    await _calm_user(redis)
    row_id, _ = await shadow_queue.push(db, task("recherche"), NOW)
    with searxng_server(SearxngDouble(results=HITS, status=500)) as double:
        result = await scheduler_for(redis, db, model, SearxngProvider(double.base_url)).run_now(
            "recherche"
        )
    assert result.status == "failed" and "HTTP 500" in (result.error or "")
    row = await _row(db, row_id)
    assert row is not None and row["versuche"] == 1
    assert await impulse_stack.size(redis, PAIR) == 0


async def test_research_without_a_provider_stores_a_marked_memory_of_novas(
    redis, db, model, scripted
) -> None:  # type: ignore[no-untyped-def]
    await _calm_user(redis)
    scripted.add("Thema: Reha", "Reha braucht Geduld, die ersten Monate zählen am meisten.")
    await shadow_queue.push(db, task("recherche"), NOW)
    result = await scheduler_for(redis, db, model).run_now("recherche")
    assert result.status == "ran", result.error
    assert result.detail is not None and result.detail["quelle"] == "gedaechtnis+modellwissen"
    [entry] = await impulse_stack.entries(redis, PAIR)
    [memory] = await _own_memories(redis)
    assert NO_PROVIDER_MARK in entry.inhalt and NO_PROVIDER_MARK in memory["inhalt"]
    assert memory["quelle"] == "recherche" and memory["beobachter"] == "assistant"


async def test_a_knowledge_gap_is_researched_into_an_entry_that_says_so(
    redis, db, model, scripted
) -> None:  # type: ignore[no-untyped-def]
    await _calm_user(redis)
    scripted.add("Thema: Reha", "Meist einige Wochen stationär, dann ambulant weiter.")
    row_id, _ = await shadow_queue.push(
        db, task("wissensluecken", reason="nicht gewusst: weiß ich nicht"), NOW
    )
    scheduler = scheduler_for(redis, db, model)
    await scheduler.register()
    assert "wissensluecken" in {c.job.name for c in await scheduler.candidates()}
    result = await scheduler.run_now("wissensluecken")
    assert result.status == "ran", result.error
    [entry] = await impulse_stack.entries(redis, PAIR)
    assert entry.aufgabe == "wissensluecken" and entry.inhalt.startswith(GAP_LEAD)
    assert "stationär" in entry.inhalt and "nicht gewusst" in entry.grund
    [memory] = await _own_memories(redis)
    assert memory["turn_id"] == f"wissensluecken-{row_id}"
    assert await _row(db, row_id) is None
    assert "wissensluecken" not in {c.job.name for c in await scheduler.candidates()}


async def test_knowledge_that_came_back_becomes_one_entry_and_no_near_duplicate(
    redis, db, model
) -> None:  # type: ignore[no-untyped-def]
    await _calm_user(redis)
    scheduler = scheduler_for(redis, db, model)
    first, _ = await shadow_queue.push(
        db,
        ShadowTask(user_id="anna", character_id="nova", task="wissen_rueckweg", topic="Rom",
                   context="Anna und der Nutzer heiraten im Mai in Rom."),
        NOW,
    )  # fmt: skip
    result = await scheduler.run_now("wissen_rueckweg")
    assert result.status == "ran", result.error
    [entry] = await impulse_stack.entries(redis, PAIR)
    assert entry.aufgabe == "wissen_rueckweg"
    assert (
        entry.inhalt
        == "Mir ist „Rom“ wieder eingefallen: Anna und der Nutzer heiraten im Mai in Rom."
    )
    assert await _row(db, first) is None

    await shadow_queue.push(
        db,
        ShadowTask(user_id="anna", character_id="nova", task="wissen_rueckweg", topic="Rom",
                   context="Anna und der Nutzer heiraten im Mai in Rom, bald."),
        NOW,
    )  # fmt: skip
    again = await scheduler.run_now("wissen_rueckweg")
    assert again.detail is not None and again.detail["eintrag"] is None
    assert again.detail["schon_im_stapel"] == [entry.id]
    assert await impulse_stack.size(redis, PAIR) == 1


async def _kzg(store: ShortTermStore, model, text: str, ms: int, turn: str) -> str:  # type: ignore[no-untyped-def]
    vector = (await model.embed([text]))[0]
    fields = {
        "user_id": "anna", "character_id": "nova", "beobachter": "user", "themen": "Hochzeit, Rom",
        "inhalt": text, "salienz": 0.95, "salienz_eingang": 0.7, "haeufigkeit": 1,
        "dimension": "kontext", "gedaechtnistyp": "lang", "emotion": "freude", "arousal": "0.6",
        "erstellt_am": NOW.timestamp(), "entitaet_ids": "", "turn_id": turn,
    }  # fmt: skip
    return await store.create(PAIR, fields, vector, ttl_seconds=3600, epoch_ms=ms)


async def test_a_promotion_that_meets_known_knowledge_feeds_wissen_rueckweg(
    redis, db, model
) -> None:  # type: ignore[no-untyped-def]
    store = ShortTermStore(redis)
    memory = Promotion(db, redis, model, short_term=store, clock=lambda: NOW.timestamp())

    def job(key: str) -> dict[str, Any]:
        return {"aufgabe": "lzg_promotion", "user_id": "anna", "character_id": "nova", "key": key}

    first = await _kzg(store, model, "Der Nutzer heiratet im Mai Anna in Rom.", 1, "t-1")
    assert (await memory.promote(job(first))).action == "neu"
    assert await shadow_queue.for_pair(db, "anna", "nova") == [], "new knowledge: no way back"

    second = await _kzg(store, model, "Der Nutzer heiratet im Mai Anna in Rom bald.", 2, "t-2")
    outcome = await memory.promote(job(second))
    assert outcome.action == "verstaerkt"
    [row] = await shadow_queue.for_pair(db, "anna", "nova")
    assert (row["aufgabe"], row["thema"]) == ("wissen_rueckweg", "Hochzeit")
    assert row["kontext"] == "Der Nutzer heiratet im Mai Anna in Rom bald."
    assert row["bezug_id"] == "t-2" and row["emotion"] == "freude"
    assert row["grund"] == f"befoerderung verstaerkt: knoten {outcome.node_id}"

    third = await _kzg(store, model, "Der Nutzer heiratet im Mai Anna in Rom, sagt er.", 3, "t-3")
    assert (await memory.promote(job(third))).action == "verstaerkt"
    [row] = await shadow_queue.for_pair(db, "anna", "nova")
    assert row["haeufigkeit"] == 2, "push semantics: the same topic is reinforced"
    assert row["salienz_roh"] == pytest.approx(0.53)
