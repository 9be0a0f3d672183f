"""Editing on the chat page in headless Chromium against the real app (scripted model only):
correcting and forgetting short- and long-term memories in place, editing a note and an
appointment in place (Enter saves, Escape cancels, a refused save shows why), every change
still there after a reload, and axe-core with no serious or critical violation in the
editing states. Screenshots land in artifacts/screenshots/."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import psycopg
import pytest
from browser_kit import ServerThread, open_page, run_axe
from playwright.sync_api import Browser, Locator, Page, expect

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]
DIM = 384
LOCAL_INPUT = "%Y-%m-%dT%H:%M"  # a datetime-local field's value
LISTED = "%d.%m.%Y %H:%M"  # an appointment's `datum_lokal`


def _write(tab: Page, text: str) -> None:
    tab.fill("#input", text)
    tab.press("#input", "Enter")


def _answered(tab: Page, count: int) -> None:
    expect(tab.locator(".msg.nova")).to_have_count(count)
    expect(tab.locator(".msg.user.pending")).to_have_count(0)


def _open_panel(tab: Page, label: str) -> None:
    tab.get_by_role("button", name=label, exact=True).click()


def _no_serious(tab: Page, label: str) -> None:
    found = run_axe(tab, label)
    serious = {k: v for k, v in found.items() if k in ("serious", "critical")}
    assert not serious, (label, serious)


def _seed_long_term(served: ServerThread, texts: list[str]) -> None:
    """Long-term nodes of the page's pair, as a promotion would have left them."""
    with psycopg.connect(served.endpoints.database_url) as conn:
        for n, text in enumerate(texts):
            vector = "[" + ",".join("1" if i == n else "0" for i in range(DIM)) + "]"
            conn.execute(
                "INSERT INTO lzg_knoten (kzg_quell_key, user_id, character_id, inhalt,"
                " embedding, gewicht_roh, gewicht_absolut, gewicht_decay)"
                " VALUES (%s, %s, 'nova', %s, %s::vector, 0.9, 0.9, 0.9 - %s)",
                (f"seed:{served.user}:{n}", served.user, text, vector, n / 10),
            )


def _edit(entry: Locator, name: str) -> Locator:
    """Open the in-place editor of an entry; its form (first field focused)."""
    entry.get_by_role("button", name=f"Bearbeiten: {name}").click()
    form = entry.page.locator("form.inline-edit")
    expect(form).to_be_visible()
    return form


def test_memories_are_corrected_and_forgotten_in_place(
    page: Page, served: ServerThread, shoot: Shoot
) -> None:
    _seed_long_term(served, ["Die Schwester heisst Berta.", "Der Nutzer mag keinen Kaffee."])
    _write(page, "Ich ziehe nächsten Monat nach Madrid.")
    _answered(page, 1)
    _open_panel(page, "Gedächtnis")
    memory = page.get_by_test_id("panel-memory")
    short_term = memory.locator("[data-role=short_term]")
    long_term = memory.locator("[data-role=long_term]")
    expect(short_term).to_contain_text("Der Nutzer zieht nach Madrid.")
    expect(long_term).to_contain_text("Die Schwester heisst Berta.")

    # a short-term entry: Escape leaves it as it was, a blank text is refused with the
    # server's reason, Enter stores the correction
    entry = short_term.locator("li", has_text="Der Nutzer zieht nach Madrid.")
    form = _edit(entry, "Der Nutzer zieht nach Madrid.")
    field = form.get_by_label("Richtiger Text")
    expect(field).to_be_focused()
    expect(field).to_have_value("Der Nutzer zieht nach Madrid.")
    page.keyboard.type("Irgendwas")
    page.keyboard.press("Escape")
    expect(form).to_have_count(0)
    expect(short_term).to_contain_text("Der Nutzer zieht nach Madrid.")

    form = _edit(entry, "Der Nutzer zieht nach Madrid.")
    field = form.get_by_label("Richtiger Text")
    field.fill("   ")
    field.press("Enter")
    error = form.get_by_role("alert")
    expect(error).to_have_text("nicht gespeichert: ein Feld ist leer oder ungültig")
    expect(field).to_have_attribute("aria-invalid", "true")
    shoot(page, "memory-refused")
    _no_serious(page, "edit/memory-refused")
    field.fill("Der Nutzer zieht nach Lissabon.")
    field.press("Enter")
    expect(memory.get_by_role("status")).to_have_text("korrigiert")
    expect(short_term).to_contain_text("Der Nutzer zieht nach Lissabon.")
    expect(short_term).not_to_contain_text("Madrid")
    expect(short_term.locator("li", has_text="Lissabon").locator(".mark")).to_have_text(
        "korrigiert"
    )

    # a long-term node corrected, another one forgotten
    node = long_term.locator("li", has_text="Die Schwester heisst Berta.")
    form = _edit(node, "Die Schwester heisst Berta.")
    shoot(page, "memory-editing")
    _no_serious(page, "edit/memory-editing")
    field = form.get_by_label("Richtiger Text")
    field.fill("Die Schwester heisst Clara.")
    page.keyboard.press("Enter")
    expect(long_term).to_contain_text("Die Schwester heisst Clara.")
    long_term.get_by_role("button", name="Vergessen: Der Nutzer mag keinen Kaffee.").click()
    expect(memory.get_by_role("status")).to_have_text("vergessen")
    expect(long_term).not_to_contain_text("Kaffee")
    shoot(page, "memory-edited")

    page.reload()
    expect(page.locator("#connection")).to_have_text("verbunden")
    _open_panel(page, "Gedächtnis")
    expect(short_term).to_contain_text("Der Nutzer zieht nach Lissabon.")
    expect(short_term).not_to_contain_text("Madrid")
    expect(long_term).to_contain_text("Die Schwester heisst Clara.")
    expect(long_term).not_to_contain_text("Berta")
    expect(long_term).not_to_contain_text("Kaffee")
    expect(long_term.locator("li", has_text="Clara").locator(".mark")).to_have_text("korrigiert")
    _no_serious(page, "edit/memory-after-reload")


def test_notes_and_appointments_are_edited_in_place(
    browser: Browser, served: ServerThread, shoot: Shoot
) -> None:
    # the browser in the server's zone, so the times typed and the times listed agree
    page = open_page(browser, served.url, timezone_id=served.settings.timezone)
    _open_panel(page, "Aufgaben")
    tasks = page.get_by_test_id("panel-tasks")
    notes = tasks.locator("[data-kind=notes]")
    notes.get_by_label("Name").fill("Umzugsliste")
    notes.get_by_label("Text").fill("Kisten")
    notes.get_by_role("button", name="Notiz anlegen").click()
    expect(notes.locator("ul")).to_contain_text("Umzugsliste: Kisten")
    timeline = tasks.locator("[data-kind=timeline]")
    timeline.get_by_label("Titel").fill("Besichtigung")
    # within the listed window (the next two weeks), in the server's zone
    today = datetime.now(ZoneInfo(served.settings.timezone)).replace(second=0, microsecond=0)
    first = (today + timedelta(days=1)).replace(hour=10, minute=0)
    later = (today + timedelta(days=2)).replace(hour=11, minute=30)
    timeline.get_by_label("Wann").fill(first.strftime(LOCAL_INPUT))
    timeline.get_by_role("button", name="Termin anlegen").click()
    expect(timeline.locator("ul")).to_contain_text(first.strftime(LISTED))

    # the note: Escape cancels, Enter saves both fields
    note = notes.locator("ul li", has_text="Umzugsliste")
    form = _edit(note, "Umzugsliste: Kisten")
    expect(form.get_by_label("Name")).to_be_focused()
    page.keyboard.type("Verworfen")
    page.keyboard.press("Escape")
    expect(notes.locator("ul")).to_contain_text("Umzugsliste: Kisten")
    form = _edit(note, "Umzugsliste: Kisten")
    form.get_by_label("Name").fill("Packliste")
    form.get_by_label("Text").fill("Kisten, Klebeband")
    shoot(page, "note-editing")
    _no_serious(page, "edit/note-editing")
    form.get_by_label("Text").press("Enter")
    expect(tasks.get_by_role("status")).to_have_text("geändert")
    expect(notes.locator("ul")).to_contain_text("Packliste: Kisten, Klebeband")
    expect(notes.locator("ul")).not_to_contain_text("Umzugsliste")

    # the appointment: a new title and time; a blank title is refused with the reason
    entry = timeline.locator("ul li", has_text="Besichtigung")
    form = _edit(entry, f"{first.strftime(LISTED)} Besichtigung")
    expect(form.get_by_label("Wann")).to_have_value(first.strftime(LOCAL_INPUT))
    form.get_by_label("Titel").fill(" ")
    form.get_by_label("Titel").press("Enter")
    expect(form.get_by_role("alert")).to_contain_text("nicht gespeichert")
    shoot(page, "appointment-refused")
    _no_serious(page, "edit/appointment-refused")
    form.get_by_label("Titel").fill("Wohnungsbesichtigung")
    form.get_by_label("Wann").fill(later.strftime(LOCAL_INPUT))
    form.get_by_label("Titel").press("Enter")
    moved = f"{later.strftime(LISTED)} Wohnungsbesichtigung"
    expect(timeline.locator("ul")).to_contain_text(moved)
    expect(timeline.locator("ul li")).to_have_count(1)  # replaced, not added

    # a directive: its text replaced (a new row, the old one deactivated)
    directives = tasks.locator("[data-kind=directives]")
    directives.get_by_label("Anweisung").fill("Den Nutzer siezen")
    directives.get_by_role("button", name="Direktive hinzufügen").click()
    form = _edit(directives.locator("ul li", has_text="siezen"), "Den Nutzer siezen")
    form.get_by_label("Anweisung").fill("Den Nutzer duzen")
    form.get_by_label("Anweisung").press("Enter")
    expect(directives.locator("ul")).to_contain_text("Den Nutzer duzen")
    expect(directives.locator("ul")).not_to_contain_text("siezen")
    shoot(page, "tasks-edited")

    page.reload()
    expect(page.locator("#connection")).to_have_text("verbunden")
    _open_panel(page, "Aufgaben")
    expect(notes.locator("ul")).to_contain_text("Packliste: Kisten, Klebeband")
    expect(timeline.locator("ul")).to_contain_text(moved)
    expect(timeline.locator("ul li")).to_have_count(1)
    expect(directives.locator("ul li")).to_have_count(1)
    expect(directives.locator("ul")).to_contain_text("Den Nutzer duzen")
