"""The archive in the graphs: the dispatcher archives every session turn (utterance and
answer, impulses too), and the CharacterGraph's enricher recalls an archived fact that never
became a memory — told weeks earlier, below the short-term threshold, the session long gone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from graph_helpers import SCORE_OK, script_human, with_rewrite
from psycopg_pool import AsyncConnectionPool
from test_character_graph import (
    NOVA_PERCEPTION,
    human_turn,
    run_character,
    run_human,
    script_character,
)

from novaberg.config import Settings
from novaberg.graph.contract import CharacterTurn, GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.short_term import ShortTermStore

PAIR = Pair("meister", "nova")
DAY = 86_400.0
START = 1_790_000_000.0
FACT = "Mein Nachbar heißt übrigens Korbinian Wegscheider."
QUESTION = "Wie hieß noch mal mein Nachbar?"


class Clock:
    """A clock the test moves (weeks pass between two sessions)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@pytest.fixture
async def moved(
    settings: Settings, redis: Any, db: AsyncConnectionPool, model: ModelLayer, clock: Clock
) -> AsyncIterator[GraphRuntime]:
    # the rewrite's words are what one test here is about: on in either profile
    deps = GraphDeps(
        settings=with_rewrite(settings), redis=redis, pool=db, model=model, clock=clock
    )
    yield GraphRuntime(deps)
    assert deps.log is not None
    await deps.log.close()


def script_forgettable(scripted: ScriptedLLM) -> None:
    """Everything said scores below the short-term gate: nothing becomes a memory."""
    script_human(scripted, score={**SCORE_OK, "salienz": 0.2})
    script_character(scripted, answer="Was für ein schöner Name!")
    scripted.add(r"schöner Name", NOVA_PERCEPTION, schema="PerceptionResult")


async def archived(db: AsyncConnectionPool) -> list[dict[str, Any]]:
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT sprecher, inhalt, turn_id, nachrichten_ids, herkunft, quelle, quell_id,"
            " extract(epoch FROM zeit) AS zeit, embedding IS NOT NULL AS vektor"
            " FROM gespraechsarchiv ORDER BY id"
        )
        return list(await cur.fetchall())


async def test_every_session_turn_is_archived_once_with_its_ids(
    moved: GraphRuntime, db: AsyncConnectionPool, scripted: ScriptedLLM
) -> None:
    script_forgettable(scripted)
    turn = human_turn(FACT, received=START)
    payload = await run_human(moved, turn)
    await run_character(moved, payload)
    rows = await archived(db)
    assert [(r["sprecher"], r["inhalt"]) for r in rows] == [
        ("user", FACT),
        ("character", "Was für ein schöner Name!"),
    ]
    assert all(r["turn_id"] == turn.turn_id and r["quelle"] == "live" and r["vektor"] for r in rows)
    assert rows[0]["nachrichten_ids"] == turn.message_ids == rows[1]["nachrichten_ids"]
    assert rows[0]["quell_id"] == f"{turn.turn_id}:user:0"
    assert rows[1]["herkunft"] == "nutzer_turn" and float(rows[0]["zeit"]) == START
    await run_character(moved, payload)  # the same turn run again (a recovered worker)
    assert len(await archived(db)) == 2, "a re-run turn is not archived twice"


async def test_an_impulse_answer_is_archived_as_the_characters(
    moved: GraphRuntime, db: AsyncConnectionPool, scripted: ScriptedLLM
) -> None:
    script_character(scripted, answer="Mir ist gerade etwas eingefallen.")
    scripted.add(r"eingefallen", NOVA_PERCEPTION, schema="PerceptionResult")
    payload = {
        "turn_id": "impuls-1",
        "eigener_gedanke": "Ich sollte nach dem Garten fragen.",
        "reiz_herkunft": "eigener_impuls",
        "gedanke_arousal": 0.5,
        "ausloeser_turn_id": None,
    }
    state = moved.character_state(
        CharacterTurn(
            pair=PAIR, turn_id="impuls-1", event_source="character", event_payload=payload
        )
    )
    async for _ in moved.stream_character(state):
        pass
    (row,) = await archived(db)
    assert (row["sprecher"], row["herkunft"], row["turn_id"]) == (
        "character",
        "eigener_impuls",
        "impuls-1",
    )


async def test_a_fact_never_promoted_is_recalled_weeks_later(
    moved: GraphRuntime,
    db: AsyncConnectionPool,
    redis: Any,
    scripted: ScriptedLLM,
    clock: Clock,
) -> None:
    script_forgettable(scripted)
    payload = await run_human(moved, human_turn(FACT, received=START))
    await run_character(moved, payload)
    assert await ShortTermStore(redis).members(PAIR) == set(), "below the threshold: no memory"

    clock.now = START + 21 * DAY  # three weeks later, a new session
    await redis.delete(keys.session_turns(PAIR), keys.session_summary(PAIR))
    _, final = await run_character(
        moved, await run_human(moved, human_turn(QUESTION, received=clock.now))
    )
    recalled = [e for e in final["memory_entries_raw"] if e["quelle"] == "archiv"]
    assert [e["inhalt"] for e in recalled] == [
        "Der Nutzer sagte am 21.09.2026: „Mein Nachbar heißt übrigens Korbinian Wegscheider.“",
        "Nova sagte am 21.09.2026: „Was für ein schöner Name!“",  # what followed, as context
    ]
    assert {e["meta"]["turn_id"] for e in recalled} == {payload["turn_id"]}
    assert "Korbinian" in final["memory_context"]
    (composer_call,) = [
        c
        for c in scripted.calls
        if c["schema"] is None
        and QUESTION in c["prompt"]
        and "[AUFGABE]\nDu bereitest den Inhalt" in c["prompt"]
    ]
    assert "Korbinian Wegscheider" in composer_call["prompt"], "the composer sees the fact"


async def test_what_the_session_still_holds_is_not_recalled_twice(
    moved: GraphRuntime, db: AsyncConnectionPool, scripted: ScriptedLLM, clock: Clock
) -> None:
    script_forgettable(scripted)
    await run_character(moved, await run_human(moved, human_turn(FACT, received=START)))
    clock.now = START + 60
    _, final = await run_character(
        moved, await run_human(moved, human_turn(QUESTION, received=clock.now))
    )
    assert [e for e in final["memory_entries_raw"] if e["quelle"] == "archiv"] == []
    assert any("Korbinian" in e["inhalt"] for e in final["memory_entries_raw"]), "the session's"


async def test_the_words_of_the_model_rewrite_find_what_the_stimulus_only_points_at(
    moved: GraphRuntime, scripted: ScriptedLLM, redis: Any, clock: Clock
) -> None:
    """ "Wie hieß der noch mal?" names nothing; the enricher's rewrite names the neighbour.
    Its vector alone is too far from the fact (a long rewrite); its word finds it."""
    rewrite = (
        "Wie hieß noch mal der Mann, der im Haus gegenüber im zweiten Stock wohnt,"
        " mein Nachbar, über den wir neulich abends gesprochen haben?"
    )
    scripted.add(r"als eigenständige Suchanfrage", rewrite)
    script_forgettable(scripted)
    await run_character(moved, await run_human(moved, human_turn(FACT, received=START)))

    clock.now = START + 21 * DAY  # a new session: two turns, then the vague question
    await redis.delete(keys.session_turns(PAIR), keys.session_summary(PAIR))
    opener = "Heute im Treppenhaus habe ich jemanden getroffen."
    await run_character(moved, await run_human(moved, human_turn(opener, received=clock.now)))
    clock.now += 60
    _, final = await run_character(
        moved, await run_human(moved, human_turn("Wie hieß der noch mal?", received=clock.now))
    )
    assert final["search_text"] == rewrite and final["search_text_source"] == "rewrite"
    recalled = [e["inhalt"] for e in final["memory_entries_raw"] if e["quelle"] == "archiv"]
    assert any("Korbinian Wegscheider" in text for text in recalled), recalled
