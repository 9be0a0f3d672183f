"""The page in German and in English (docs/behaviour/web.md#language), in headless Chromium
against the real app: the language follows the browser unless the settings choose one; a
choice applies at once, everything drawn so far redrawn, and survives a reload; the stage
line and a failed turn's reason read in the page's language; the server's sentences come in
it too (the request names it). axe-core finds no violation in these states; screenshots in
artifacts/screenshots/ (their paths are printed)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from browser_kit import ServerThread, open_page, run_axe
from playwright.sync_api import Browser, Page, expect

from novaberg.api.error_sentences import SENTENCES, SENTENCES_EN

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]
LOCALES = {"de": "de-DE", "en": "en-GB"}
OTHER = {"de": "en", "en": "de"}
DAY = {"de": "%d.%m.%Y %H:%M", "en": "%d/%m/%Y %H:%M"}  # how each language writes a time
RESPONDER = "Antworte kurz und natürlich"  # the responder prompt of the scripted model


def _words(tab: Page, lang: str) -> dict[str, str]:
    """The page's own catalogue for `lang`, as the browser loaded it."""
    words: dict[str, str] = tab.evaluate(
        "async (lang) => (await import(`/web/lang_${lang}.js`)).default", lang
    )
    return words


def _say(words: dict[str, str], key: str, **values: Any) -> str:
    text = words[key]
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def _write(tab: Page, text: str) -> None:
    tab.fill("#input", text)
    tab.press("#input", "Enter")


def _open_settings(tab: Page, words: dict[str, str]) -> None:
    tab.get_by_role("button", name=words["page.tab.settings"], exact=True).click()
    expect(tab.get_by_test_id("panel-settings")).to_be_visible()


def _no_violations(tab: Page, label: str) -> None:
    found = run_axe(tab, label)
    assert found == {}, found


@pytest.mark.parametrize("lang", ["de", "en"])
def test_the_page_speaks_the_browsers_language(
    browser: Browser, served: ServerThread, shoot: Shoot, lang: str
) -> None:
    tab = open_page(browser, served.url, locale=LOCALES[lang])
    words = _words(tab, lang)
    assert tab.evaluate("document.documentElement.lang") == lang
    expect(tab.locator("#send")).to_have_text(words["composer.send"])
    placeholder = words["chars.placeholder"].replace("{name}", "Nova")  # the shown character
    expect(tab.locator("#input")).to_have_attribute("placeholder", placeholder)
    expect(tab.locator("#connection")).to_have_text(words["connection.online"])
    limit = "16.384" if lang == "de" else "16,384"
    expect(tab.get_by_test_id("input-count")).to_have_text(
        _say(words, "composer.countOf", chars=0, limit=limit)
    )
    _write(tab, "Hallo, wie geht es dir?")
    expect(tab.locator(".msg.nova")).to_have_count(1)
    expect(tab.locator(".msg.nova .inspect")).to_have_text(words["app.inspect"])
    print("screenshot:", shoot(tab, f"main-{lang}"))
    _no_violations(tab, f"language-main-{lang}")

    # the settings: the language choice follows the browser; one time zone is the server's,
    # the other the person's (no longer two fields both called "Zeitzone")
    _open_settings(tab, words)
    settings = tab.get_by_test_id("panel-settings")
    choice = tab.get_by_test_id("language-choice")
    expect(choice).to_have_value("")
    expect(settings.locator("dt").first).to_have_text(words["settings.serverZone"])
    expect(settings.get_by_label(words["settings.yourZone"])).to_have_count(1)
    assert words["settings.serverZone"] != words["settings.yourZone"]
    expect(settings.get_by_label(words["settings.language"])).to_have_count(1)
    print("screenshot:", shoot(tab, f"settings-{lang}"))
    _no_violations(tab, f"language-settings-{lang}")

    # a time the page writes itself: an appointment tomorrow, in the language's own way
    tab.get_by_role("button", name=words["page.tab.tasks"], exact=True).click()
    timeline = tab.get_by_test_id("panel-tasks").locator("[data-kind=timeline]")
    when = (datetime.now() + timedelta(days=1)).replace(hour=10, minute=0, second=0)
    timeline.get_by_label(words["tasks.title"]).fill("Zahnarzt")
    timeline.get_by_label(words["tasks.when"]).fill(when.strftime("%Y-%m-%dT%H:%M"))
    timeline.get_by_role("button", name=words["tasks.addEvent"]).click()
    expect(timeline.locator("ul")).to_contain_text(f"{when.strftime(DAY[lang])} Zahnarzt")


@pytest.mark.parametrize("lang", ["de", "en"])
def test_the_language_changes_at_once_and_stays(
    browser: Browser, served: ServerThread, shoot: Shoot, lang: str
) -> None:
    """Chosen in the settings: everything on the page is in the other language at once —
    the static words, what the modules drew (badge, counter, buttons under an answer, the
    failed turn's reason) — and stays so after a reload; "as the browser" goes back."""
    tab = open_page(browser, served.url, locale=LOCALES[lang])
    other = OTHER[lang]
    mine, theirs = _words(tab, lang), _words(tab, other)
    served.app.state.context.model.text.add(RESPONDER, "", fault="timeout", times=1)
    _write(tab, "Bist du da?")
    failed = tab.locator(".msg.user.failed .reason")
    timeout = {"reason": mine["errors.modell_timeout"]}
    expect(failed).to_have_text(_say(mine, "app.noAnswer", **timeout))
    _write(tab, "Und jetzt?")
    expect(tab.locator(".msg.nova")).to_have_count(1)

    _open_settings(tab, mine)
    tab.get_by_test_id("language-choice").select_option(other)
    assert tab.evaluate("document.documentElement.lang") == other
    expect(tab.locator("#send")).to_have_text(theirs["composer.send"])
    expect(tab.locator("#connection")).to_have_text(theirs["connection.online"])
    expect(tab.locator("#h-settings")).to_have_text(theirs["page.tab.settings"])
    expect(tab.locator(".msg.nova .inspect")).to_have_text(theirs["app.inspect"])
    expect(failed).to_have_text(
        _say(theirs, "app.noAnswer", reason=theirs["errors.modell_timeout"])
    )
    expect(tab.locator(".msg.user.failed .retry")).to_have_text(theirs["app.retry"])
    limit = "16.384" if other == "de" else "16,384"
    expect(tab.get_by_test_id("input-count")).to_have_text(
        _say(theirs, "composer.countOf", chars=0, limit=limit)
    )
    print("screenshot:", shoot(tab, f"switched-to-{other}"))
    _no_violations(tab, f"language-switched-{lang}-to-{other}")

    tab.reload()
    expect(tab.locator("#connection")).to_have_text(theirs["connection.online"])
    expect(tab.locator("#send")).to_have_text(theirs["composer.send"])
    expect(tab.locator(".msg.history.failed .reason")).to_have_text(
        _say(theirs, "app.noAnswer", reason=theirs["errors.modell_timeout"])
    )
    _open_settings(tab, theirs)
    choice = tab.get_by_test_id("language-choice")
    expect(choice).to_have_value(other)
    choice.select_option("")  # as the browser again
    expect(tab.locator("#send")).to_have_text(mine["composer.send"])
    assert tab.evaluate("localStorage.getItem('novaberg-lang')") is None


@pytest.mark.parametrize("lang", ["de", "en"])
def test_stage_line_and_failed_turn_in_the_pages_language(
    browser: Browser, served: ServerThread, shoot: Shoot, lang: str
) -> None:
    tab = open_page(browser, served.url, locale=LOCALES[lang])
    words = _words(tab, lang)
    scripted = served.app.state.context.model.text
    scripted.add(RESPONDER, latency_ms=4000, times=1)  # only delays: the line stays a while
    _write(tab, "Erzähl mir etwas.")
    stage = tab.get_by_test_id("stage-line")
    expect(stage).to_be_visible()
    # node and text read in one go (the line moves on with every node)
    node, text = tab.evaluate(
        "() => [document.getElementById('stage').dataset.node,"
        " document.getElementById('stage-text').textContent]"
    )
    assert text == _say(words, "stage.line", name="Nova", action=words[f"stage.{node}"])
    print("screenshot:", shoot(tab, f"stage-line-{lang}"))
    _no_violations(tab, f"language-stage-{lang}")
    expect(tab.locator(".msg.nova")).to_have_count(1)
    expect(stage).to_be_hidden()

    scripted.add(RESPONDER, "", fault="timeout", times=1)
    _write(tab, "Bist du da?")
    failed = tab.locator(".msg.user.failed")
    expect(failed.locator(".reason")).to_have_text(
        _say(words, "app.noAnswer", reason=words["errors.modell_timeout"])
    )
    expect(failed).not_to_contain_text("modell_timeout")
    print("screenshot:", shoot(tab, f"failed-turn-{lang}"))
    _no_violations(tab, f"language-failed-{lang}")


@pytest.mark.parametrize("lang", ["de", "en"])
def test_the_servers_sentences_come_in_the_pages_language(
    browser: Browser, served: ServerThread, shoot: Shoot, lang: str
) -> None:
    """A paste over the limit is refused by the box with the server's own sentence; a
    folder the server does not offer is refused with the rule in words, not the server's
    English detail; a refused key is said in the dialog."""
    tab = open_page(browser, served.url, locale=LOCALES[lang])
    words = _words(tab, lang)
    table = SENTENCES if lang == "de" else SENTENCES_EN
    tab.fill("#input", "x" * 20_000)
    expect(tab.get_by_test_id("input-reason")).to_have_text(table["text_zu_lang"])

    _open_settings(tab, words)
    library = tab.get_by_test_id("library")
    library.get_by_test_id("library-path").fill("/etc")
    library.get_by_test_id("library-approve").click()
    refused = _say(words, "library.refused.not_offered", path="/etc")
    expect(library.get_by_test_id("library-error")).to_have_text(
        _say(words, "library.notApproved", error=refused)
    )
    print("screenshot:", shoot(tab, f"library-refused-{lang}"))
    _no_violations(tab, f"language-library-refused-{lang}")

    tab.evaluate("localStorage.setItem('novaberg-token', 'nvb_falsch')")
    tab.evaluate("novaberg.token = 'nvb_falsch'; novaberg.socket.close()")
    reason = tab.get_by_test_id("login-reason")
    expect(reason).to_have_text(words["connection.keyRefused"])
    expect(tab.locator("#connection")).to_have_text(words["connection.refusedKey"])
