"""The input box and the sign-in in headless Chromium against the real app: the counter
against the server's limit, a refused message kept in the box with the reason in words
(too long here already, or refused by the server), and a refused key said as such in the
dialog and the connection badge. axe-core finds nothing serious in these states;
screenshots land in artifacts/screenshots/ (their paths are printed)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from browser_kit import ServerThread, open_page, run_axe, serve_settings
from playwright.sync_api import Browser, Page, expect

from novaberg.api.error_sentences import SENTENCES
from novaberg.runtime.services import Endpoints
from novaberg.store.postgres import create_pool
from novaberg.store.users import issue_token

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]
TOO_LONG = SENTENCES["text_zu_lang"]
KEY_REFUSED = "Der Schlüssel wurde nicht angenommen."


def _serious(found: dict[str, list[str]]) -> dict[str, list[str]]:
    return {k: v for k, v in found.items() if k in ("serious", "critical")}


def _input_value_length(page: Page) -> int:
    return int(page.evaluate("document.getElementById('input').value.length"))


def test_the_counter_and_a_refused_long_paste(page: Page, shoot: Shoot) -> None:
    counter = page.get_by_test_id("input-count")
    reason = page.get_by_test_id("input-reason")
    page.fill("#input", "Hallo")
    expect(counter).to_have_text("5 Zeichen · höchstens 16.384 Bytes")  # the API's limit
    page.fill("#input", "a" * 15_000)
    expect(counter).to_have_text("Fast am Limit: noch 1.384 Bytes")
    page.fill("#input", "ä" * 9_000)  # 9 000 characters, 18 000 bytes
    expect(counter).to_have_text("Zu lang: 18.000 von höchstens 16.384 Bytes")
    expect(reason).to_have_text(TOO_LONG)

    page.fill("#input", "x" * 2_000_000)  # a 2 MB paste
    page.press("#input", "Enter")
    expect(reason).to_have_text(TOO_LONG)
    expect(reason).to_be_visible()
    assert _input_value_length(page) == 2_000_000, "the paste stays in the box"
    expect(page.locator("#messages .msg")).to_have_count(0)  # no bubble, red or not
    expect(page.locator("#error")).to_be_hidden()
    serious = _serious(run_axe(page, "input-too-long"))
    print("screenshot:", shoot(page, "input-too-long"))
    assert not serious, serious

    page.fill("#input", "Jetzt kurz.")
    expect(reason).to_be_hidden()
    page.press("#input", "Enter")
    expect(page.locator(".msg.nova")).to_have_count(1)
    expect(counter).to_have_text("0 Zeichen · höchstens 16.384 Bytes")
    print("screenshot:", shoot(page, "input-sent"))


def test_a_message_the_server_refuses_goes_back_into_the_box(
    endpoints: Endpoints, tmp_path: Path, browser: Browser, shoot: Shoot
) -> None:
    """Over the token's rate (one message at once, one a minute): the second message is
    refused with 429 and comes back into the box with the server's sentence."""
    settings = serve_settings(tmp_path, endpoints, chat_burst=1, chat_rate=1 / 60)
    with ServerThread(settings, endpoints) as served:
        page = open_page(browser, served.url)
        page.fill("#input", "Erste Nachricht")
        page.press("#input", "Enter")
        expect(page.locator(".msg.user")).to_have_count(1)
        expect(page.locator(".msg.user.pending")).to_have_count(0)  # acknowledged
        page.fill("#input", "Zweite Nachricht")
        page.press("#input", "Enter")
        reason = page.get_by_test_id("input-reason")
        expect(reason).to_have_text(SENTENCES["zu_viele_anfragen"])
        expect(page.locator("#input")).to_have_value("Zweite Nachricht")
        expect(page.locator(".msg.user")).to_have_count(1)  # no failed bubble for it
        expect(page.locator(".msg.failed")).to_have_count(0)
        assert not re.search(r"zu_viele_anfragen|\d{3}", reason.inner_text())
        serious = _serious(run_axe(page, "input-refused-by-server"))
        print("screenshot:", shoot(page, "input-refused-by-server"))
        assert not serious, serious


def _issue_token(database_url: str, user: str) -> str:
    async def issue() -> str:
        pool = await create_pool(database_url, min_size=1, max_size=1)
        try:
            return (await issue_token(pool, user, "e2e")).token
        finally:
            await pool.close()

    with ThreadPoolExecutor(1) as thread:  # the browser's driver holds this thread's loop
        return thread.submit(asyncio.run, issue()).result()


def test_a_wrong_key_is_said_in_the_dialog_and_the_badge(
    endpoints: Endpoints, tmp_path: Path, browser: Browser, shoot: Shoot
) -> None:
    """The browser keeps a key the server does not know (served off loopback, so the page
    carries none of its own): the dialog says why it opened, the badge says what to do
    (not "verbinde neu …"); the right key connects and the conversation works."""
    settings = serve_settings(tmp_path, endpoints, host="0.0.0.0")
    with ServerThread(settings, endpoints) as served:
        right = _issue_token(endpoints.database_url, served.user)
        tab = browser.new_context(locale="de-DE").new_page()
        tab.add_init_script("localStorage.setItem('novaberg-token', 'nvb_falsch')")
        tab.goto(f"http://127.0.0.1:{settings.port}/")
        dialog = tab.locator("#login")
        expect(dialog).to_be_visible()
        expect(tab.get_by_test_id("login-reason")).to_have_text(KEY_REFUSED)
        badge = tab.locator("#connection")
        expect(badge).to_have_text("Schlüssel abgelehnt – bitte neu eingeben")
        assert tab.evaluate("novaberg.socket.readyState") == 3, "the refused socket is closed"
        serious = _serious(run_axe(tab, "login-key-refused"))
        print("screenshot:", shoot(tab, "login-key-refused"))
        assert not serious, serious

        tab.fill("#token-input", right)
        tab.press("#token-input", "Enter")
        expect(badge).to_have_text("verbunden")
        expect(dialog).to_be_hidden()
        expect(tab.locator("#error")).to_be_hidden()  # what the refused key could not load
        tab.fill("#input", "Hallo, jetzt mit dem richtigen Schlüssel")
        tab.press("#input", "Enter")
        expect(tab.locator(".msg.nova")).to_have_count(1)
        print("screenshot:", shoot(tab, "login-key-accepted"))
