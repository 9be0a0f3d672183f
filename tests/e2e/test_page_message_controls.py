"""Message controls in headless Chromium against the real app, in German and in English:
a new answer to the last message and browsing the answers (‹ 1/2 ›), stopping a running
turn, editing and deleting the last message (web/message_controls.js). axe-core finds no
violation in these states; screenshots land in artifacts/screenshots/ (paths printed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from browser_kit import RULES, ServerThread, open_page, run_axe, serve_settings
from playwright.sync_api import Browser, Page, expect

from novaberg.runtime.services import Endpoints

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]

FIRST = "Erste Fassung der Antwort."
LATER = "Schön, von dir zu hören!"  # browser_kit's responder rule, rendered

WORDS = {
    "de-DE": {
        "regenerate": "Neue Antwort schreiben lassen",
        "previous": "Vorherige Antwort",
        "stopped": "Angehalten – keine Antwort.",
        "stop": "Anhalten",
        "edit": "Letzte Nachricht bearbeiten",
        "delete": "Letzte Nachricht löschen",
        "position": "Antwort {n} von {total}",
    },
    "en-GB": {
        "regenerate": "Ask for a new answer",
        "previous": "Previous answer",
        "stopped": "Stopped – no answer.",
        "stop": "Stop",
        "edit": "Edit your last message",
        "delete": "Delete your last message",
        "position": "Answer {n} of {total}",
    },
}
LOCALES = pytest.mark.parametrize("locale", list(WORDS))


@pytest.fixture
def served_first(tmp_path: Path, endpoints: Endpoints):  # type: ignore[no-untyped-def]
    """The page's server whose responder answers FIRST once, then browser_kit's answer."""
    rules = tmp_path / "controls.json"
    once = {"match": "Antworte kurz und natürlich", "output": FIRST, "times": 1, "latency_ms": 500}
    rules.write_text(json.dumps([once, *RULES]), encoding="utf-8")
    with ServerThread(serve_settings(tmp_path, endpoints, script=rules), endpoints) as server:
        yield server


@pytest.fixture
def served_slow_first(tmp_path: Path, endpoints: Endpoints):  # type: ignore[no-untyped-def]
    """The page's server whose first answer takes 8 s longer: time to look and to stop."""
    rules = tmp_path / "slow.json"
    once = {"match": "Antworte kurz und natürlich", "times": 1, "latency_ms": 8000}
    rules.write_text(json.dumps([once, *RULES]), encoding="utf-8")
    with ServerThread(serve_settings(tmp_path, endpoints, script=rules), endpoints) as server:
        yield server


def _no_violations(page: Page, label: str) -> None:
    found = run_axe(page, label)
    assert found == {}, found


@LOCALES
def test_a_new_answer_and_browsing_the_answers(
    browser: Browser, served_first: ServerThread, shoot: Shoot, locale: str
) -> None:
    words = WORDS[locale]
    page = open_page(browser, served_first.url, locale=locale)
    page.fill("#input", "Erzähl mir etwas.")
    page.press("#input", "Enter")
    nova = page.locator(".msg.nova")
    expect(nova).to_have_count(1)
    expect(nova).to_contain_text(FIRST)
    regenerate = page.get_by_role("button", name=words["regenerate"])
    expect(regenerate).to_be_visible()
    regenerate.click()
    expect(nova).to_contain_text(LATER)
    expect(nova).to_have_count(1)  # replaced, not added
    expect(page.locator(".msg.user")).to_have_count(1)  # the message was not sent again
    position = page.get_by_test_id("turn-position")
    expect(position).to_have_text("2/2")
    expect(position).to_have_attribute("aria-label", words["position"].format(n=2, total=2))
    _no_violations(page, f"answers-2-of-2-{locale}")
    print("screenshot:", shoot(page, f"answers-2-of-2-{locale}"))
    page.get_by_role("button", name=words["previous"]).click()
    expect(nova).to_contain_text(FIRST)
    expect(position).to_have_text("1/2")
    print("screenshot:", shoot(page, f"answers-1-of-2-{locale}"))
    page.reload()  # what is remembered is the chosen one
    expect(page.locator(".msg.nova")).to_contain_text(FIRST)
    expect(page.get_by_test_id("turn-position")).to_have_text("1/2")


@LOCALES
def test_stop_edit_and_delete(
    browser: Browser, served_slow_first: ServerThread, shoot: Shoot, locale: str
) -> None:
    words = WORDS[locale]
    page = open_page(browser, served_slow_first.url, locale=locale)
    page.fill("#input", "Eins")
    page.press("#input", "Enter")
    stop = page.get_by_role("button", name=words["stop"])
    expect(stop).to_be_visible()
    expect(stop).to_have_text(words["stop"])
    _no_violations(page, f"turn-running-{locale}")
    stop.click()
    expect(page.locator(".msg.user.failed .reason")).to_have_text(words["stopped"])
    expect(stop).to_be_hidden()
    expect(page.locator(".msg.nova")).to_have_count(0)
    _no_violations(page, f"turn-stopped-{locale}")
    print("screenshot:", shoot(page, f"turn-stopped-{locale}"))

    page.fill("#input", "Zwei")
    page.press("#input", "Enter")
    expect(page.locator(".msg.nova")).to_have_count(1)
    page.get_by_role("button", name=words["edit"]).click()
    page.get_by_test_id("edit-box").fill("Zwei, korrigiert")
    expect(page.get_by_role("button", name=words["edit"])).to_have_count(0)  # while editing
    _no_violations(page, f"message-editing-{locale}")
    print("screenshot:", shoot(page, f"message-editing-{locale}"))
    page.locator(".edit-form button[type=submit]").click()
    expect(page.locator(".msg.user", has_text="Zwei, korrigiert")).to_have_count(1)
    expect(page.locator(".msg.user").filter(has_text="Zwei")).to_have_count(1)
    expect(page.locator(".msg.nova")).to_have_count(1)  # the new answer; the old one left
    expect(page.locator(".msg.user.pending")).to_have_count(0)
    print("screenshot:", shoot(page, f"message-edited-{locale}"))

    page.get_by_role("button", name=words["delete"]).click()
    expect(page.locator(".msg.user", has_text="Zwei, korrigiert")).to_have_count(0)
    expect(page.locator(".msg.nova")).to_have_count(0)
    _no_violations(page, f"message-deleted-{locale}")
    print("screenshot:", shoot(page, f"message-deleted-{locale}"))
    page.reload()
    expect(page.locator(".msg.user")).to_have_count(1)  # only the stopped one is kept
    expect(page.locator(".msg.user")).to_contain_text("Eins")
    expect(page.locator(".msg.user .reason")).to_have_text(words["stopped"])  # in words
