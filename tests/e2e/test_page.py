"""The whole chat page in headless Chromium against the real app (scripted model only):
history after a reload and paged backwards, two tabs of one user, an impulse coloured as
Nova's own thought, every side panel with live data of a scripted conversation, keyboard
only, a phone-sized screen, dark mode, and axe-core with no serious or critical violation.
Screenshots land in artifacts/screenshots/, the axe summary in artifacts/axe-summary.json."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from browser_kit import ServerThread, open_page, run_axe
from playwright.sync_api import Browser, Page, expect
from psycopg.types.json import Jsonb

from novaberg.events.delivery import Delivery
from novaberg.events.model import ResponseMessage
from novaberg.store.pipeline_log import KIND_RAW_TURN
from novaberg.store.redis_client import create_redis

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]
ANSWER = "Schön, von dir zu hören!"  # the scripted answer as rendered (markdown bold)


def _write(tab: Page, text: str) -> None:
    tab.fill("#input", text)
    tab.press("#input", "Enter")


def _answered(tab: Page, count: int) -> None:
    expect(tab.locator(".msg.nova")).to_have_count(count)
    expect(tab.locator(".msg.user.pending")).to_have_count(0)


def _open_panel(tab: Page, label: str) -> None:
    tab.get_by_role("button", name=label, exact=True).click()


def _seed_history(served: ServerThread, count: int) -> None:
    """`count` answered turns of earlier days, written as the dispatcher records them."""
    with psycopg.connect(served.endpoints.database_url) as conn:
        for n in range(count):
            conn.execute(
                "INSERT INTO pipeline_log (erstellt_am, turn_id, quelle, node, art, inhalt,"
                " user_id, character_id) VALUES (now() - make_interval(days => 3, mins => %s),"
                " %s, 'character', 'dispatcher', %s, %s, %s, 'nova')",
                (
                    count - n,
                    f"alt-{n}",
                    KIND_RAW_TURN,
                    Jsonb(
                        {
                            "user_prompt": f"frühere Frage {n}",
                            "response": f"frühere Antwort {n}",
                            "user_emotion": {"emotion": "freude", "arousal": 0.6},
                            "nova_emotion": {"emotion": "neugierig", "arousal": 0.3},
                            "herkunft": "nutzer_turn",
                        }
                    ),
                    served.user,
                ),
            )


def _recorded_turns(served: ServerThread, expected: int, timeout: float = 30.0) -> int:
    """Wait until the dispatcher, which runs after the answer is released, has recorded
    `expected` answered turns: a reload right after the answer would race it."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(served.endpoints.database_url) as conn:
        while True:
            row = conn.execute(
                "SELECT count(*) FROM pipeline_log WHERE art = %s AND user_id = %s",
                (KIND_RAW_TURN, served.user),
            ).fetchone()
            count = int(row[0]) if row else 0
            if count >= expected or time.monotonic() > deadline:
                return count
            time.sleep(0.1)


def test_history_survives_a_reload_and_pages_backwards(
    browser: Browser, served: ServerThread, shoot: Shoot
) -> None:
    _seed_history(served, 35)
    page = open_page(browser, served.url)
    expect(page.locator(".msg.nova.history")).to_have_count(30)  # the newest page
    _write(page, "Ich ziehe nach **Madrid**")
    _answered(page, 31)
    expect(page.locator(".msg.nova strong").last).to_have_text("dir")  # markdown rendered
    expect(page.locator(".msg.user .text").last).to_have_text("Ich ziehe nach **Madrid**")
    assert _recorded_turns(served, 36) == 36, "today's answered turn was recorded"

    page.reload()
    expect(page.locator("#connection")).to_have_text("verbunden")
    history = page.locator(".msg.nova.history")
    expect(history).to_have_count(30)  # the newest page: 29 seeded turns and today's
    expect(history.last).to_contain_text(ANSWER)
    expect(page.locator(".msg.user.history .text").last).to_have_text("Ich ziehe nach **Madrid**")
    older = history.first.locator("time").inner_text()
    assert re.search(r"\b20\d\d\b", older), f"an older day shows its date: {older}"
    shoot(page, "history-after-reload")

    page.get_by_test_id("message-list").evaluate("list => { list.scrollTop = 0; }")
    expect(history).to_have_count(36)
    expect(history.first).to_contain_text("frühere Antwort 0")
    expect(page.get_by_test_id("message-list")).to_have_attribute("data-history-more", "false")
    turns = page.eval_on_selector_all(".msg.nova", "els => els.map(e => e.dataset.turn)")
    assert len(turns) == len(set(turns)) == 36, "every turn once, oldest first"
    assert turns[:2] == ["alt-0", "alt-1"]


def test_two_tabs_of_one_user(browser: Browser, served: ServerThread, shoot: Shoot) -> None:
    context = browser.new_context(locale="de-DE")
    first = context.new_page()
    second = context.new_page()
    for tab in (first, second):
        tab.set_default_timeout(30_000)
        tab.goto(served.url)
        expect(tab.locator("#connection")).to_have_text("verbunden")
    _write(first, "Hallo aus Tab eins")
    _answered(first, 1)
    expect(first.locator(".msg.nova .badge")).to_have_count(0)
    expect(second.locator(".msg.user.other")).to_contain_text("Hallo aus Tab eins")
    expect(second.locator(".msg.nova")).to_have_count(1)
    expect(second.locator(".msg.nova .badge")).to_have_text("Antwort an ein anderes Gerät")
    for tab in (first, second):
        expect(tab.get_by_test_id("panel-emotions")).to_have_attribute("data-observations", "2")
    shoot(second, "second-tab")


def test_an_impulse_is_coloured_as_novas_own_thought(
    page: Page, served: ServerThread, shoot: Shoot
) -> None:
    _write(page, "Hallo")
    _answered(page, 1)

    async def publish() -> None:
        redis = create_redis(served.endpoints.redis_url)
        try:
            message = ResponseMessage(
                character_id="nova",
                nachricht="Mir ist gerade *etwas* eingefallen.",
                turn_id="impuls-1",
                nachrichten_ids=[],
                reiz_herkunft="eigener_impuls",
                emotion="neugierig",
                arousal=0.5,
            )
            await Delivery(redis).send(served.user, message)
        finally:
            await redis.aclose()

    with ThreadPoolExecutor(1) as pool:  # Playwright's loop runs in this thread
        pool.submit(asyncio.run, publish()).result(30)
    impulse = page.locator(".msg.nova.impulse")
    expect(impulse).to_have_count(1)
    expect(impulse.locator(".badge")).to_have_text("💭 eigener Gedanke")
    expect(impulse.locator("em")).to_have_text("etwas")
    ordinary = page.locator(".msg.nova:not(.impulse)").first
    style = "e => getComputedStyle(e).backgroundColor"
    assert impulse.evaluate(style) != ordinary.evaluate(style), "coloured apart"
    shoot(page, "impulse")


def test_every_panel_shows_live_data(page: Page, served: ServerThread, shoot: Shoot) -> None:
    picker = page.get_by_test_id("character-picker")
    expect(picker.locator("option")).to_contain_text(["Nova"])
    assert picker.input_value() == "nova"

    _write(page, "Ich ziehe nächsten Monat nach Madrid.")
    expect(page.get_by_test_id("stage-line")).to_be_visible()  # while Nova works
    expect(page.get_by_test_id("stage-line")).to_contain_text("Nova")
    _answered(page, 1)
    expect(page.get_by_test_id("stage-line")).to_be_hidden()

    emotions = page.get_by_test_id("panel-emotions")
    expect(emotions).to_have_attribute("data-observations", "2")
    expect(emotions.locator("[data-role=now]")).to_contain_text("Du wirkst sehr froh.")
    expect(emotions.locator("svg[aria-label*='du: Begeisterung']")).to_have_count(1)
    expect(emotions.locator("svg polygon.area.nova")).to_have_count(1)
    expect(emotions.locator("svg polygon.area.user")).to_have_count(1)
    expect(emotions.locator("svg polyline.line.nova")).to_have_attribute("data-points", "1")
    shoot(page, "panel-emotions")

    _open_panel(page, "Gedächtnis")
    memory = page.get_by_test_id("panel-memory")
    expect(memory).to_be_visible()
    short_term = memory.locator("[data-role=short_term]")
    expect(short_term).to_contain_text("Der Nutzer zieht nach Madrid.")
    memory.get_by_test_id("details-switch").click()  # themes are a raw figure
    expect(short_term).to_contain_text("Umzug")
    assert short_term.locator("li").count() >= 2, "both actors' entries"
    memory.get_by_label("Suchen").fill("gibtesnicht")
    expect(short_term).to_have_text("keine Treffer")
    memory.get_by_label("Suchen").fill("madrid")
    expect(short_term).to_have_attribute("data-count", "1")
    expect(short_term).to_contain_text("Der Nutzer zieht nach Madrid.")
    memory.get_by_role("button", name="Im Gedächtnis suchen").click()
    expect(memory.locator("[data-role=hits]")).to_contain_text("Madrid")
    shoot(page, "panel-memory")
    memory.get_by_role("button", name="Vergessen: Der Nutzer zieht nach Madrid.").click()
    expect(memory.get_by_role("status")).to_have_text("vergessen")
    memory.get_by_label("Suchen").fill("")
    expect(short_term).not_to_contain_text("Der Nutzer zieht nach Madrid.")

    _open_panel(page, "Aufgaben")
    tasks = page.get_by_test_id("panel-tasks")
    notes = tasks.locator("[data-kind=notes]")
    notes.get_by_label("Name").fill("Umzugsliste")
    notes.get_by_label("Text").fill("Kisten, Klebeband")
    notes.get_by_role("button", name="Notiz anlegen").click()
    expect(notes.locator("ul")).to_contain_text("Umzugsliste: Kisten, Klebeband")
    directives = tasks.locator("[data-kind=directives]")
    directives.get_by_label("Anweisung").fill("Den Nutzer duzen")
    directives.get_by_role("button", name="Direktive hinzufügen").click()
    expect(directives.locator("ul")).to_contain_text("Den Nutzer duzen")
    timeline = tasks.locator("[data-kind=timeline]")
    timeline.get_by_label("Titel").fill("Besichtigung")
    timeline.get_by_label("Wann").fill("2031-05-02T10:00")
    timeline.get_by_role("button", name="Termin anlegen").click()
    expect(tasks.get_by_role("status")).to_have_text("gespeichert")
    shoot(page, "panel-tasks")
    notes.get_by_role("button", name="Entfernen: Umzugsliste: Kisten, Klebeband").click()
    expect(notes.locator("ul")).to_have_text("keine Notizen")

    page.locator(".msg.nova .inspect").first.click()
    inspector = page.get_by_test_id("turn-inspector")
    expect(inspector).to_be_visible()
    inspector.get_by_test_id("details-switch").click()  # the developer's view on demand
    votes = inspector.locator("[data-role=tribunal] li")
    expect(votes).to_have_count(3)
    expect(votes.first).to_contain_text("passt")  # each vote with its reason
    expect(votes.first).to_contain_text("Schwellen 0.7/0.9")  # and the role's thresholds
    stages = inspector.locator("[data-role=stages] tbody tr")
    assert stages.count() >= 8, "every stage of both graphs"
    expect(inspector.locator("[data-role=stages] tbody")).to_contain_text("responder")
    # each stage's detail: what it decided, from its log row
    expect(inspector.locator("[data-role=stages] tbody")).to_contain_text("urteil=ok")
    expect(inspector.locator("[data-role=memory-used]")).to_contain_text("Kurzzeit-Treffer")
    expect(inspector.locator("[data-role=corrections]")).to_be_visible()
    shoot(page, "turn-inspector")

    _open_panel(page, "Einstellungen")
    panel = page.get_by_test_id("panel-settings")
    expect(panel.locator("[data-role=model]")).to_have_text("scripted (scripted)")
    expect(panel.locator("[data-role=timezone]")).to_have_text(served.settings.timezone)
    expect(page.locator("#demo-banner")).to_be_hidden()  # the scripted model is no demo
    shoot(page, "panel-settings")


def test_keyboard_only(page: Page) -> None:
    page.keyboard.press("Tab")
    expect(page.locator(".skip")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#input")).to_be_focused()
    page.keyboard.type("Nur mit der Tastatur")
    page.keyboard.press("Enter")
    _answered(page, 1)
    memory_tab = page.get_by_role("button", name="Gedächtnis", exact=True)
    for _ in range(40):
        if memory_tab.evaluate("b => b === document.activeElement"):
            break
        page.keyboard.press("Tab")
    expect(memory_tab).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("panel-memory")).to_be_visible()


def test_accessibility_phone_and_dark_mode(
    browser: Browser, served: ServerThread, shoot: Shoot
) -> None:
    problems: dict[str, dict[str, list[str]]] = {}
    views = {
        "desktop-light": {"viewport": {"width": 1280, "height": 800}},
        "phone-light": {"viewport": {"width": 390, "height": 844}, "is_mobile": True},
        "desktop-dark": {"viewport": {"width": 1280, "height": 800}, "color_scheme": "dark"},
        "phone-dark": {
            "viewport": {"width": 390, "height": 844},
            "is_mobile": True,
            "color_scheme": "dark",
        },
    }
    for index, (label, options) in enumerate(views.items()):
        tab = open_page(browser, served.url, **options)
        _write(tab, f"Hallo {label}")
        _answered(tab, index + 1)  # the history of the earlier views is shown too
        wide = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert wide <= 0, f"{label}: {wide}px wider than the screen"
        for panel in ("Gefühle", "Gedächtnis", "Aufgaben", "Ablauf", "Einstellungen"):
            _open_panel(tab, panel)
            if panel == "Ablauf":
                tab.locator(".msg.nova .inspect").last.click()
                expect(tab.locator("li.stage[data-stage=check]")).to_have_count(1)
            found = run_axe(tab, f"{label}/{panel}")
            serious = {k: v for k, v in found.items() if k in ("serious", "critical")}
            if serious:
                problems[f"{label}/{panel}"] = serious
        _open_panel(tab, "Gefühle")
        shoot(tab, label)
        tab.context.close()
    assert not problems, problems


def test_a_dropped_card_becomes_a_character_to_talk_to(
    page: Page, served: ServerThread, shoot: Shoot
) -> None:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "Ebba Seitentest", "description": "Eine Fährfrau.", "first_mes": "Hej."},
    }
    transfer = page.evaluate_handle(
        """text => {
            const dt = new DataTransfer();
            dt.items.add(new File([text], "ebba.json", {type: "application/json"}));
            return dt;
        }""",
        json.dumps(card),
    )
    picker = page.get_by_test_id("character-picker")
    try:
        page.dispatch_event("body", "drop", {"dataTransfer": transfer})
        expect(page.locator("#card-status")).to_have_text("Ebba Seitentest importiert")
        expect(picker.locator("option")).to_contain_text(["Ebba Seitentest", "Nova"])
        expect(picker).not_to_have_value("nova")
        # the empty conversation opens with the card's greeting (shown, not an answer)
        expect(page.get_by_test_id("card-greeting").locator(".text")).to_have_text("Hej.")
        expect(page.get_by_test_id("message-list").locator("li")).to_have_count(1)
        _write(page, "Hallo Ebba")
        _answered(page, 1)
        shoot(page, "card-imported")
        picker.select_option("nova")  # back to Nova: her (empty) history, not Ebba's
        expect(page.get_by_test_id("message-list").locator("li")).to_have_count(0)
    finally:
        with psycopg.connect(served.endpoints.database_url) as conn:
            conn.execute("DELETE FROM characters WHERE name = 'Ebba Seitentest'")
