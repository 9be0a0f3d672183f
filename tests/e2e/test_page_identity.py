"""One identity on the page, in German and English, in headless Chromium against the real
app: the page says whom it talks as (the local single user, no key needed; or the user a
key belongs to), signs in as another person with a key and out again, makes a key for
other apps (shown once, copied, listed, revoked) and keeps the person's persona. axe-core
finds no violation in these states; screenshots land in artifacts/screenshots/."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from browser_kit import WAIT_MS, ServerThread, open_page, run_axe
from playwright.sync_api import Browser, Page, Route, expect

from novaberg.store.postgres import create_pool
from novaberg.store.users import issue_token

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]

WORDS = {
    "de-DE": {
        "local": "Lokaler Einzelnutzer „{user}“ – kein Schlüssel nötig",
        "with_key": "Angemeldet als „{user}“ (mit Schlüssel)",
        "refused": "Dieser Schlüssel wurde nicht angenommen; die Seite bleibt, wie sie war.",
        "settings": "Einstellungen",
        "this_page": "diese Seite",
        "copied": "Kopiert.",
        "revoke": "Schlüssel „{label}“ widerrufen",
        "revoked": "Schlüssel „{label}“ widerrufen.",
        "saved": "Persona gespeichert.",
        "removed": "Persona entfernt.",
        "other": "en",
        "other_local": "Local single user “{user}” – no key needed",
    },
    "en-GB": {
        "local": "Local single user “{user}” – no key needed",
        "with_key": "Signed in as “{user}” (with a key)",
        "refused": "This key was not accepted; the page stays as it was.",
        "settings": "Settings",
        "this_page": "this page",
        "copied": "Copied.",
        "revoke": "Revoke key “{label}”",
        "revoked": "Key “{label}” revoked.",
        "saved": "Persona saved.",
        "removed": "Persona removed.",
        "other": "de",
        "other_local": "Lokaler Einzelnutzer „{user}“ – kein Schlüssel nötig",
    },
}
LOCALES = list(WORDS)


def _token_of(database_url: str, user: str) -> str:
    """A new token of `user` (made as `novaberg user add` does)."""

    async def issue() -> str:
        pool = await create_pool(database_url, min_size=1, max_size=1)
        try:
            return (await issue_token(pool, user, "e2e")).token
        finally:
            await pool.close()

    with ThreadPoolExecutor(1) as thread:  # the browser's driver holds this thread's loop
        return thread.submit(asyncio.run, issue()).result()


def _settings(tab: Page) -> None:
    """Open the settings panel (its tab button is found by its panel, in any language)."""
    tab.locator('.tabs button[data-panel="panel-settings"]').click()
    expect(tab.get_by_test_id("identity")).to_be_visible()


def _shoot(tab: Page, shoot: Shoot, name: str, part: str) -> None:
    """The whole page, and the screen with `part` (a test id) scrolled into view: the side
    panel scrolls on its own, so the whole page's picture shows only its top."""
    page = shoot(tab, name)
    section = page.with_name(f"{page.stem}-section.png")
    tab.get_by_test_id(part).scroll_into_view_if_needed()
    tab.screenshot(path=str(section))
    print(page, section)


def _no_violations(tab: Page, label: str) -> None:
    found = run_axe(tab, label)
    assert found == {}, found


@pytest.mark.parametrize("locale", LOCALES)
def test_the_page_says_who_it_is_and_signs_in_as_another_person(
    browser: Browser, served: ServerThread, shoot: Shoot, locale: str
) -> None:
    words = WORDS[locale]
    tab = open_page(browser, served.url, locale=locale)
    local = words["local"].format(user=served.user)
    expect(tab.get_by_test_id("identity-badge")).to_have_text(local)
    _settings(tab)
    expect(tab.get_by_test_id("identity-line")).to_have_text(local)
    expect(tab.get_by_test_id("identity-signout")).to_be_hidden()
    _shoot(tab, shoot, "identity-local", "identity-signin")
    _no_violations(tab, f"identity-local-{locale}")

    # the line follows a change of language
    tab.evaluate("async lang => (await import('/web/i18n.js')).setLanguage(lang)", words["other"])
    expect(tab.get_by_test_id("identity-badge")).to_have_text(
        words["other_local"].format(user=served.user)
    )
    tab.evaluate("async () => (await import('/web/i18n.js')).setLanguage(null)")
    expect(tab.get_by_test_id("identity-badge")).to_have_text(local)

    # a wrong key is said, and the page keeps talking as before
    key = tab.get_by_test_id("identity-key")
    key.fill("nvb_falsch")
    key.press("Enter")
    expect(tab.get_by_test_id("identity-error")).to_have_text(words["refused"])
    expect(key).to_have_attribute("aria-invalid", "true")
    expect(tab.get_by_test_id("identity-badge")).to_have_text(local)

    # another person's key: the page talks as them (after its reload)
    other = f"berta{served.user[4:]}"
    key.fill(_token_of(served.endpoints.database_url, other))
    key.press("Enter")
    expect(tab.get_by_test_id("identity-badge")).to_have_text(words["with_key"].format(user=other))
    expect(tab.locator("#connection")).to_have_class(re.compile(r"\bonline\b"))
    _settings(tab)
    expect(tab.get_by_test_id("identity-signout")).to_be_visible()
    _shoot(tab, shoot, "identity-signed-in", "identity-signout")
    _no_violations(tab, f"identity-signed-in-{locale}")

    # signing out falls back to the local single user
    tab.get_by_test_id("identity-signout").click()
    expect(tab.get_by_test_id("identity-badge")).to_have_text(local)
    expect(tab.locator("#connection")).to_have_class(re.compile(r"\bonline\b"))


@pytest.mark.parametrize("locale", LOCALES)
def test_a_key_for_other_apps_is_shown_once_copied_and_revoked(
    browser: Browser, served: ServerThread, shoot: Shoot, locale: str
) -> None:
    words = WORDS[locale]
    tab = open_page(
        browser, served.url, locale=locale, permissions=["clipboard-read", "clipboard-write"]
    )
    _settings(tab)
    tokens = tab.get_by_test_id("token-list")
    expect(tokens.locator("li")).to_have_count(1)  # the page's own key
    expect(tokens.locator("li")).to_contain_text(words["this_page"])
    expect(tokens.locator("li button")).to_have_count(0)  # not revoked from the page itself

    tab.get_by_test_id("token-label").fill("SillyTavern")
    tab.get_by_test_id("token-label").press("Enter")
    value = tab.get_by_test_id("token-value")
    expect(value).to_have_text(re.compile(r"^nvb_\S{20,}$"))
    secret = value.inner_text()
    expect(tokens.locator("li")).to_have_count(2)
    row = tokens.locator("li", has_text="SillyTavern")
    expect(row).to_have_count(1)
    assert secret not in tokens.inner_text(), "the list never shows the key"

    tab.get_by_test_id("token-copy").click()
    expect(tab.get_by_test_id("token-copied")).to_have_text(words["copied"])
    assert tab.evaluate("navigator.clipboard.readText()") == secret
    _shoot(tab, shoot, "identity-token-made", "token-list")
    _no_violations(tab, f"identity-token-made-{locale}")

    # the key talks as the page's person
    me = tab.request.get(f"{served.url}/chat/me", headers={"Authorization": f"Bearer {secret}"})
    assert me.status == 200 and me.json()["user_id"] == served.user

    tab.get_by_role("button", name=words["revoke"].format(label="SillyTavern")).click()
    expect(tab.get_by_test_id("token-status")).to_have_text(
        words["revoked"].format(label="SillyTavern")
    )
    expect(row).to_have_count(0)
    expect(tab.get_by_test_id("token-new")).to_be_hidden()
    gone = tab.request.get(f"{served.url}/chat/me", headers={"Authorization": f"Bearer {secret}"})
    assert gone.status == 401
    _shoot(tab, shoot, "identity-token-revoked", "token-status")
    _no_violations(tab, f"identity-token-revoked-{locale}")


@pytest.mark.parametrize("locale", LOCALES)
def test_the_persona_form_keeps_a_name_and_a_description(
    browser: Browser, served: ServerThread, shoot: Shoot, locale: str
) -> None:
    words = WORDS[locale]
    tab = open_page(browser, served.url, locale=locale)
    _settings(tab)
    name, about = tab.get_by_test_id("persona-name"), tab.get_by_test_id("persona-description")
    expect(name).to_have_value("")
    name.fill("  Annika ")
    about.fill("Gärtnerin in Kassel, mag Regen.")
    tab.get_by_test_id("persona-form").locator("button[type=submit]").click()
    expect(tab.get_by_test_id("persona-status")).to_have_text(words["saved"])
    expect(name).to_have_value("Annika")
    _shoot(tab, shoot, "identity-persona-saved", "persona-status")
    _no_violations(tab, f"identity-persona-saved-{locale}")

    tab.reload()
    expect(tab.locator("#connection")).to_have_class(re.compile(r"\bonline\b"))
    _settings(tab)
    expect(name).to_have_value("Annika")
    expect(about).to_have_value("Gärtnerin in Kassel, mag Regen.")

    name.fill("")
    about.fill("")
    tab.get_by_test_id("persona-form").locator("button[type=submit]").click()
    expect(tab.get_by_test_id("persona-status")).to_have_text(words["removed"])


class HeldPersona:
    """A tab whose requests for `/chat/me` and `/persona` are held until let go, so a test
    can make the page's first load of the persona cross what the person does. (On a slow
    machine the load waits for `/chat/me` and can start after the person began to type.)"""

    def __init__(self, browser: Browser, url: str) -> None:
        self.tab = browser.new_context(locale="de-DE").new_page()
        self.tab.set_default_timeout(WAIT_MS)
        self.held: dict[str, Any] = {}
        self.seen: list[str] = []
        self.tab.on("request", lambda r: self.seen.append(f"{r.method} {r.url}"))
        self.tab.route("**/chat/me", self._hold_me)
        self.tab.route("**/persona", self._hold_persona)
        self.tab.goto(url)
        self.wait_for("me")
        _settings(self.tab)

    def _hold_me(self, route: Route) -> None:
        self.held.setdefault("me", []).append(route)  # the page may ask more than once

    def let_me_go(self) -> None:
        for route in self.held["me"]:
            route.continue_()
        self.tab.unroute("**/chat/me")  # later ones pass

    def _hold_persona(self, route: Route) -> None:
        if route.request.method == "PUT":
            self.held["put"] = route
        else:  # the load reads now and answers when let go
            self.held["get"] = (route, route.fetch())

    def wait_for(self, key: str) -> None:
        for _ in range(400):  # 20 s
            if key in self.held:
                return
            self.tab.wait_for_timeout(50)
        raise AssertionError(f"no {key} request held; requests: {self.seen[-15:]}")

    def answer_the_load(self) -> None:
        """Let the held load answer and give the page a moment to apply (or drop) it."""
        route, answer = self.held["get"]
        with self.tab.expect_event("requestfinished", lambda r: r.url.endswith("/persona")):
            route.fulfill(response=answer)
        self.tab.wait_for_timeout(500)


def test_a_persona_load_that_crosses_a_save_does_not_undo_it(
    browser: Browser, served: ServerThread
) -> None:
    """The load leaves after save was pressed and answers after the save, with the persona
    from before: it must not empty the fields the save just filled."""
    page = HeldPersona(browser, served.url)
    page.tab.get_by_test_id("persona-name").fill("Annika")
    page.tab.get_by_test_id("persona-form").locator("button[type=submit]").click()
    page.wait_for("put")
    page.let_me_go()
    page.wait_for("get")
    page.held["put"].continue_()
    expect(page.tab.get_by_test_id("persona-status")).to_have_text(WORDS["de-DE"]["saved"])
    page.answer_the_load()
    expect(page.tab.get_by_test_id("persona-name")).to_have_value("Annika")


def test_a_persona_load_that_starts_after_typing_does_not_empty_the_form(
    browser: Browser, served: ServerThread
) -> None:
    """The load starts only once the person has typed (CI saw this: the form emptied, the
    save then removed the persona)."""
    page = HeldPersona(browser, served.url)
    page.tab.get_by_test_id("persona-name").fill("Annika")
    page.tab.get_by_test_id("persona-description").fill("Gärtnerin in Kassel.")
    page.let_me_go()
    page.wait_for("get")
    page.answer_the_load()
    expect(page.tab.get_by_test_id("persona-name")).to_have_value("Annika")
    page.tab.unroute("**/persona")
    page.tab.get_by_test_id("persona-form").locator("button[type=submit]").click()
    expect(page.tab.get_by_test_id("persona-status")).to_have_text(WORDS["de-DE"]["saved"])
    expect(page.tab.get_by_test_id("persona-description")).to_have_value("Gärtnerin in Kassel.")


@pytest.mark.parametrize("locale", LOCALES)
def test_the_identity_section_on_a_dark_phone(
    browser: Browser, served: ServerThread, shoot: Shoot, locale: str
) -> None:
    tab = open_page(
        browser,
        served.url,
        locale=locale,
        viewport={"width": 390, "height": 844},
        color_scheme="dark",
    )
    expect(tab.get_by_test_id("identity-badge")).to_have_text(
        WORDS[locale]["local"].format(user=served.user)
    )
    _settings(tab)
    tab.get_by_test_id("token-label").fill("Handy")
    tab.get_by_test_id("token-label").press("Enter")
    expect(tab.get_by_test_id("token-value")).to_have_text(re.compile(r"^nvb_"))
    _shoot(tab, shoot, "identity-dark-phone", "token-value")
    _no_violations(tab, f"identity-dark-phone-{locale}")
