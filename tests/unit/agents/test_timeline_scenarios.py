"""Acceptance scenarios 9–15 (spec agents.md §7) for the timeline agent, plus reminders."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from agent_turns import BERLIN, NOW, last, run_turn

from novaberg.agents.pending import pending_question
from novaberg.agents.timeline import repository as repo
from novaberg.agents.timeline.search import time_window
from novaberg.graph.contract import GraphDeps
from novaberg.llm.scripted import ScriptedLLM

CLS = "TimelineClassification"


def classify_as(scripted: ScriptedLLM, utterance: str, **output: Any) -> None:
    scripted.add(rf"Äußerung des Nutzers: {utterance}", output, schema=CLS)


async def entry(deps: GraphDeps, title: str, when: datetime, precision: str = "minute") -> int:
    return await repo.insert(
        deps.pool,
        "u1",
        title=title,
        event_time=when,
        event_type="termin",
        details="",
        precision=precision,
        now=NOW,
    )


async def rows(deps: GraphDeps) -> list[dict[str, Any]]:
    async with deps.pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM timeline ORDER BY id")
        return await cur.fetchall()


THURSDAY_14 = datetime(2026, 8, 6, 14, 0, tzinfo=BERLIN)


async def test_s9_dentist_thursday(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    classify_as(
        scripted,
        "Zahnarzt am Donnerstag",
        action="create",
        target="Zahnarzt",
        zeitausdruck="am Donnerstag um 14 Uhr",
        event_type="termin",
    )
    out = await run_turn(deps, "Zahnarzt am Donnerstag um 14 Uhr", "timeline")
    [row] = await rows(deps)
    assert row["title"] == "Zahnarzt" and row["event_type"] == "termin"
    assert row["event_time"] == datetime(2026, 8, 6, 12, 0, tzinfo=UTC)
    assert row["precision"] == "minute"
    assert (row["binding"], row["remind"], row["conflict_check"]) == (True, True, True)
    assert row["wiedervorlage_am"] == row["event_time"] + timedelta(days=7)
    assert out["timeline_id"] == row["id"]
    assert last(out).status == "abgeschlossen"


async def test_s10_birthday(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    classify_as(
        scripted,
        "Annas Geburtstag",
        action="create",
        target="Annas Geburtstag",
        zeitausdruck="am 15. Mai",
        event_type="geburtstag",
    )
    await run_turn(deps, "Annas Geburtstag ist am 15. Mai", "timeline")
    [row] = await rows(deps)
    assert row["event_type"] == "geburtstag"
    assert row["event_time"] == datetime(2027, 5, 15, 0, 0, tzinfo=BERLIN)
    assert row["precision"] == "day"
    assert (row["binding"], row["remind"], row["conflict_check"]) == (False, True, False)


async def _move(deps: GraphDeps, scripted: ScriptedLLM, said: str) -> list[dict[str, Any]]:
    old_id = await entry(deps, "Zahnarzt", THURSDAY_14)
    classify_as(
        scripted,
        f"Verschieb den Zahnarzt {said}",
        action="reschedule",
        target="Zahnarzt",
        zeitausdruck=said,
    )
    out = await run_turn(deps, f"Verschieb den Zahnarzt {said}", "timeline")
    assert last(out).status == "abgeschlossen"
    all_rows = await rows(deps)
    old = next(r for r in all_rows if r["id"] == old_id)
    assert old["aktiv"] is False
    [new] = [r for r in all_rows if r["aktiv"]]
    assert (new["title"], new["event_type"]) == ("Zahnarzt", "termin")
    assert new["vorgaenger_id"] == old_id and out["timeline_id"] == new["id"]
    return [old, new]


async def test_s11_reschedule_to_friday_keeps_clock(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    _old, new = await _move(deps, scripted, "auf Freitag")
    assert new["event_time"] == datetime(2026, 8, 7, 14, 0, tzinfo=BERLIN)
    assert new["precision"] == "minute"


async def test_s12_reschedule_to_16_keeps_day(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    _old, new = await _move(deps, scripted, "auf 16 Uhr")
    assert new["event_time"] == datetime(2026, 8, 6, 16, 0, tzinfo=BERLIN)


async def test_s13_read_tomorrow_only(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await entry(deps, "Friseur", datetime(2026, 8, 1, 10, 0, tzinfo=BERLIN))
    await entry(deps, "Steuerberater", datetime(2026, 8, 5, 9, 0, tzinfo=BERLIN))
    before = await rows(deps)
    classify_as(scripted, "Was steht morgen an", action="read", zeitausdruck="morgen")
    out = await run_turn(deps, "Was steht morgen an?", "timeline")
    assert last(out).status == "abgeschlossen"
    assert "Friseur" in out["task_block"] and "01.08.2026 10:00" in out["task_block"]
    assert "Steuerberater" not in out["task_block"]
    assert await rows(deps) == before


async def test_s14_same_title_same_day_is_duplicate(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await entry(deps, "Zahnarzt", THURSDAY_14)
    classify_as(
        scripted,
        "Zahnarzt am Donnerstag um 16",
        action="create",
        target="Zahnarzt",
        zeitausdruck="am Donnerstag um 16 Uhr",
    )
    out = await run_turn(deps, "Zahnarzt am Donnerstag um 16 Uhr", "timeline")
    assert len(await rows(deps)) == 1
    assert "bereits eingetragen" in last(out).result
    assert "timeline_id" not in out or out["timeline_id"] is None


async def test_s14_same_title_differently_written_same_day_is_duplicate(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """The title is compared normalised: case and white space do not make it new."""
    await entry(deps, "Zahnarzt", THURSDAY_14)
    classify_as(
        scripted,
        "zahnarzt am Donnerstag um 9",
        action="create",
        target="  zahnarzt ",
        zeitausdruck="am Donnerstag um 9 Uhr",
    )
    out = await run_turn(deps, "zahnarzt am Donnerstag um 9 Uhr", "timeline")
    assert len(await rows(deps)) == 1
    assert "bereits eingetragen" in last(out).result and "06.08.2026" in last(out).result


async def test_a_second_dentist_appointment_on_another_day_is_stored(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """An active 'Zahnarzt' on Thursday does not block 'Zahnarzt am Montag um 9': a second
    appointment on another day is a new one."""
    await entry(deps, "Zahnarzt", THURSDAY_14)
    classify_as(
        scripted,
        "Zahnarzt am Montag um 9",
        action="create",
        target="Zahnarzt",
        zeitausdruck="am Montag um 9",
    )
    out = await run_turn(deps, "Zahnarzt am Montag um 9", "timeline")
    assert last(out).status == "abgeschlossen"
    assert "bereits eingetragen" not in last(out).result
    times = {r["event_time"] for r in await rows(deps) if r["aktiv"]}
    assert times == {THURSDAY_14, datetime(2026, 8, 3, 9, 0, tzinfo=BERLIN)}


async def test_arzt_is_not_blocked_by_zahnarzt_on_the_same_day(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """A title that merely contains the new one is another appointment."""
    await entry(deps, "Zahnarzt", THURSDAY_14)
    classify_as(
        scripted,
        "Arzt am Donnerstag um 9",
        action="create",
        target="Arzt",
        zeitausdruck="am Donnerstag um 9 Uhr",
    )
    out = await run_turn(deps, "Arzt am Donnerstag um 9 Uhr", "timeline")
    assert last(out).status == "abgeschlossen"
    assert sorted(r["title"] for r in await rows(deps) if r["aktiv"]) == ["Arzt", "Zahnarzt"]


async def test_a_past_appointment_of_that_title_does_not_block(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    await entry(deps, "Zahnarzt", NOW - timedelta(days=120))  # last check-up
    classify_as(
        scripted,
        "Zahnarzt am Montag um 9",
        action="create",
        target="Zahnarzt",
        zeitausdruck="am Montag um 9",
    )
    await run_turn(deps, "Zahnarzt am Montag um 9", "timeline")
    active = [r for r in await rows(deps) if r["aktiv"]]
    assert len(active) == 2
    assert datetime(2026, 8, 3, 9, 0, tzinfo=BERLIN) in {r["event_time"] for r in active}


async def test_s15_idiom_is_refused(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    classify_as(scripted, "Die Zeit vergeht", action="rejected", grund="redewendung")
    out = await run_turn(deps, "Die Zeit vergeht wie im Flug", "timeline")
    result = last(out)
    assert result.status == "abgelehnt" and result.correction.suggestion
    assert await rows(deps) == []
    assert await pending_question(deps.redis, "u1") is None
    assert "Stattdessen möglich" in out["task_block"]


async def test_delete_with_two_past_entries_asks(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    first = await entry(deps, "Yoga", datetime(2026, 7, 20, 18, 0, tzinfo=BERLIN))
    second = await entry(deps, "Yoga", datetime(2026, 7, 27, 18, 0, tzinfo=BERLIN))
    classify_as(scripted, "Lösch Yoga", action="delete", target="Yoga")
    out = await run_turn(deps, "Lösch Yoga", "timeline")
    assert last(out).status == "rueckfrage" and "27.07.2026 18:00" in out["task_block"]
    await run_turn(deps, "den vom 27.07.2026 18:00", action="resume")
    states = {r["id"]: r["aktiv"] for r in await rows(deps)}
    assert states == {first: True, second: False}


async def test_delete_takes_the_single_future_entry(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    past = await entry(deps, "Yoga", datetime(2026, 7, 27, 18, 0, tzinfo=BERLIN))
    future = await entry(deps, "Yoga", datetime(2026, 8, 3, 18, 0, tzinfo=BERLIN))
    classify_as(scripted, "Sag Yoga ab", action="delete", target="Yoga")
    out = await run_turn(deps, "Sag Yoga ab", "timeline")
    assert last(out).status == "abgeschlossen"
    states = {r["id"]: r["aktiv"] for r in await rows(deps)}
    assert states == {past: True, future: False}


async def test_due_reminders_and_mark(deps: GraphDeps) -> None:
    due = await entry(deps, "Zahnarzt", NOW - timedelta(minutes=5))
    await entry(deps, "Später", NOW + timedelta(hours=1))
    stale = await entry(deps, "Uralt", NOW - timedelta(days=3))
    birthday_today = await entry(
        deps, "Annas Geburtstag", datetime(2026, 7, 31, 0, 0, tzinfo=BERLIN), precision="day"
    )
    found = await repo.due_reminders(deps.pool, NOW)
    assert {r["id"] for r in found} == {due, birthday_today}
    assert await repo.mark_reminded(deps.pool, [due, birthday_today], NOW) == 2
    assert await repo.mark_reminded(deps.pool, [due], NOW) == 0  # idempotent
    assert await repo.due_reminders(deps.pool, NOW) == []
    assert await repo.skip_stale_reminders(deps.pool, NOW) == 1
    marked = {r["id"]: r["erinnert_am"] for r in await rows(deps)}
    assert marked[stale] is not None


async def test_replace_is_one_transaction(deps: GraphDeps) -> None:
    """A change deactivates and inserts together; a failed insert keeps the old entry
    active, and an entry that is no longer active gets no (second) successor."""
    when = datetime(2026, 8, 4, 14, 0, tzinfo=BERLIN)
    old_id = await entry(deps, "Zahnarzt", when)
    change = {"event_type": "termin", "details": "", "precision": "minute", "now": NOW}
    new_id = await repo.replace(
        deps.pool, "u1", old_id, title="Zahnarzt", event_time=when + timedelta(hours=1), **change
    )
    assert new_id is not None
    by_id = {row["id"]: row for row in await rows(deps)}
    assert not by_id[old_id]["aktiv"] and by_id[new_id]["aktiv"]
    assert by_id[new_id]["vorgaenger_id"] == old_id

    again = await repo.replace(deps.pool, "u1", old_id, title="Zahnarzt", event_time=when, **change)
    assert again is None and len(await rows(deps)) == 2

    try:  # `title NOT NULL`: the insert fails after the deactivation ran
        await repo.replace(deps.pool, "u1", new_id, title=None, event_time=when, **change)  # type: ignore[arg-type]
    except Exception as exc:  # psycopg.errors.NotNullViolation
        assert "null value" in str(exc)
    else:
        raise AssertionError("an entry without a title must not be stored")
    by_id = {row["id"]: row for row in await rows(deps)}
    assert by_id[new_id]["aktiv"] and len(by_id) == 2


async def test_read_this_week_lists_only_this_week(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await entry(deps, "Friseur", datetime(2026, 8, 1, 10, 0, tzinfo=BERLIN))  # Saturday
    await entry(deps, "Steuerberater", datetime(2026, 8, 5, 9, 0, tzinfo=BERLIN))  # next week
    classify_as(scripted, "Was steht diese Woche an", action="read", zeitausdruck="diese Woche")
    out = await run_turn(deps, "Was steht diese Woche an?", "timeline")
    assert last(out).status == "abgeschlossen"
    assert "Friseur" in out["task_block"] and "Steuerberater" not in out["task_block"]


@pytest.mark.parametrize(
    ("said", "start", "end"),
    [
        ("diese Woche", date(2026, 7, 27), date(2026, 8, 3)),
        ("this week", date(2026, 7, 27), date(2026, 8, 3)),
        ("nächste Woche", date(2026, 8, 3), date(2026, 8, 10)),
        ("diesen Monat", date(2026, 7, 1), date(2026, 8, 1)),
        ("am Wochenende", date(2026, 8, 1), date(2026, 8, 3)),
        ("nächstes Wochenende", date(2026, 8, 8), date(2026, 8, 10)),
        ("morgen", date(2026, 8, 1), date(2026, 8, 2)),
    ],
)
def test_spoken_periods_become_windows(said: str, start: date, end: date) -> None:
    window = time_window(said, NOW, BERLIN)  # NOW: Friday 31.07.2026
    assert window is not None
    assert (window[0].date(), window[1].date()) == (start, end)
