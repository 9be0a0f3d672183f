"""The model connection in the settings panel (web/model_settings.js), in headless Chromium
against the real app, in German and English: the operator tests a second OpenAI-compatible
server (a scripted one on 127.0.0.1) — a wrong key said in words, then the right one ok
with its time —, applies it and the next answer comes from it without a restart, then
resets to the environment's; a person who is not the operator sees the model and that only
the operator can change it, and no form. axe-core finds nothing in these states;
screenshots land in artifacts/screenshots/ (their paths are printed)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from browser_kit import RULES, ServerThread, open_page, run_axe, serve_settings
from playwright.sync_api import Browser, Page, expect

from novaberg.llm.scripted import Rule, ScriptedLLM
from novaberg.runtime.services import Endpoints
from novaberg.store.postgres import create_pool
from novaberg.store.users import issue_token
from scripted_openai import ScriptedOpenAIServer

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]
KEY = "sk-zweiter-server-1234"
FROM_SECOND = "Hier antwortet der zweite Server."
LOCALES = ["de-DE", "en-GB"]

WORDS = {
    "de": {
        "env": re.compile(r"^scripted \(scripted\) – aus den Umgebungsvariablen$"),
        "page": re.compile(r"^zweiter – in den Einstellungen gesetzt von gast\d+, "),
        "key_refused": "Chatmodell: Der Server hat den Schlüssel abgelehnt.",
        "chat_ok": re.compile(r"^Chatmodell: antwortet, strukturierte Antwort in [\d,]+ s$"),
        "embed_ok": re.compile(r"^Embeddings: 384 Dimensionen, passend zur Datenbank"),
        "tested": "Geprüft – noch nicht übernommen.",
        "applied": "Übernommen – gilt ab der nächsten Antwort, ohne Neustart.",
        "reset": "Zurückgesetzt: Es gilt wieder die Verbindung aus der Umgebung.",
        "key_hint": "Ein Schlüssel ist gesetzt (••••1234); leer lassen, um ihn zu behalten.",
        "operator_only": "Nur der Betreiber dieser Installation kann das Modell ändern.",
        "missing": "Bitte Adresse und Modell ausfüllen.",
        "title": "Modellverbindung",
    },
    "en": {
        "env": re.compile(r"^scripted \(scripted\) – from the environment variables$"),
        "page": re.compile(r"^zweiter – set in the settings by gast\d+, "),
        "key_refused": "Chat model: The server refused the key.",
        "chat_ok": re.compile(r"^Chat model: answers, structured reply in [\d.]+ s$"),
        "embed_ok": re.compile(r"^Embeddings: 384 dimensions, matching the database"),
        "tested": "Checked – not applied yet.",
        "applied": "Applied – used from the next answer on, no restart needed.",
        "reset": "Reset: the connection from the environment applies again.",
        "key_hint": "A key is set (••••1234); leave empty to keep it.",
        "operator_only": "Only the operator of this installation can change the model.",
        "missing": "Please fill in the address and the model.",
        "title": "Model connection",
    },
}


def _second_model() -> ScriptedLLM:
    """The page's rules (router, judges, thinker), answering with its own sentence."""
    llm = ScriptedLLM([Rule.from_dict(dict(r)) for r in RULES])
    llm.add("Antworte kurz und natürlich", FROM_SECOND)
    return llm


def _pictures(tab: Page, shoot: Shoot, name: str) -> None:
    """The whole page, and the section on its own (the settings panel scrolls inside, so
    the whole page shows only its top)."""
    whole = shoot(tab, name)
    section = whole.with_name(f"{whole.stem}-section.png")
    tab.get_by_test_id("model-connection").screenshot(path=str(section))
    print("screenshot:", whole)
    print("screenshot:", section)


def _settings_panel(tab: Page) -> None:
    tab.click("button[data-panel=panel-settings]")
    expect(tab.get_by_test_id("model-connection")).to_be_visible()


@pytest.mark.parametrize("locale", LOCALES)
def test_the_operator_tests_applies_and_resets_a_connection(
    endpoints: Endpoints, tmp_path: Path, browser: Browser, shoot: Shoot, locale: str
) -> None:
    words = WORDS[locale[:2]]
    _environment_connection(endpoints.database_url)
    settings = serve_settings(tmp_path, endpoints)
    with (
        ServerThread(settings, endpoints) as served,
        ScriptedOpenAIServer(_second_model(), KEY) as second,
    ):
        tab = open_page(browser, served.url, locale=locale)
        _settings_panel(tab)
        source = tab.get_by_test_id("model-source")
        expect(tab.locator("#h-model")).to_have_text(words["title"])
        expect(source).to_have_text(words["env"])

        tab.get_by_test_id("model-test").click()  # nothing filled in
        expect(tab.get_by_test_id("model-error")).to_have_text(words["missing"])
        expect(tab.get_by_test_id("model-url")).to_have_attribute("aria-invalid", "true")

        tab.get_by_test_id("model-url").fill(second.url)
        tab.get_by_test_id("model-name").fill("zweiter")
        tab.get_by_test_id("model-key").fill("sk-falsch")
        tab.get_by_test_id("model-test").click()
        chat_line = tab.get_by_test_id("model-check-chat")
        expect(chat_line.locator(".bad")).to_have_text(words["key_refused"])
        expect(tab.get_by_test_id("model-error")).to_be_hidden()
        assert run_axe(tab, f"model-key-refused-{locale}") == {}
        _pictures(tab, shoot, "model-key-refused")

        tab.get_by_test_id("model-key").fill(KEY)
        tab.get_by_test_id("model-test").click()
        expect(chat_line).to_have_text(words["chat_ok"])
        expect(tab.get_by_test_id("model-check-embeddings")).to_have_text(words["embed_ok"])
        expect(tab.get_by_test_id("model-status")).to_have_text(words["tested"])
        assert run_axe(tab, f"model-tested-{locale}") == {}
        _pictures(tab, shoot, "model-tested")

        tab.get_by_test_id("model-apply").click()
        expect(tab.get_by_test_id("model-status")).to_have_text(words["applied"])
        expect(source).to_have_text(words["page"])
        expect(tab.get_by_test_id("model-key")).to_have_value("")  # never shown again
        expect(tab.locator("[data-role=model-key-hint]")).to_have_text(words["key_hint"])
        assert KEY not in tab.content()
        assert run_axe(tab, f"model-applied-{locale}") == {}
        _pictures(tab, shoot, "model-applied")
        other = "en" if locale.startswith("de") else "de"
        switch = "lang => import('/web/i18n.js').then(m => m.setLanguage(lang))"
        tab.evaluate(switch, other)  # the drawn lines follow a language change
        expect(tab.get_by_test_id("model-status")).to_have_text(WORDS[other]["applied"])
        expect(source).to_have_text(WORDS[other]["page"])
        tab.evaluate(switch, locale[:2])
        expect(tab.get_by_test_id("model-status")).to_have_text(words["applied"])

        tab.fill("#input", "Hallo, wer antwortet jetzt?")
        tab.press("#input", "Enter")
        expect(tab.locator(".msg.nova")).to_contain_text(FROM_SECOND)  # no restart
        assert any(r["model"] == "zweiter" for r in second.requests)

        tab.get_by_test_id("model-reset").click()
        expect(tab.get_by_test_id("model-status")).to_have_text(words["reset"])
        expect(source).to_have_text(words["env"])
        _pictures(tab, shoot, "model-reset")


def _environment_connection(database_url: str) -> None:
    """No page connection left by an earlier test (these tests share the database)."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("DELETE FROM modell_verbindung")


def _issue_token(database_url: str, user: str) -> str:
    async def issue() -> str:
        pool = await create_pool(database_url, min_size=1, max_size=1)
        try:
            return (await issue_token(pool, user, "e2e")).token
        finally:
            await pool.close()

    with ThreadPoolExecutor(1) as thread:  # the browser's driver holds this thread's loop
        return thread.submit(asyncio.run, issue()).result()


@pytest.mark.parametrize("locale", LOCALES)
def test_a_person_who_is_not_the_operator_sees_no_form(
    endpoints: Endpoints, tmp_path: Path, browser: Browser, shoot: Shoot, locale: str
) -> None:
    words = WORDS[locale[:2]]
    _environment_connection(endpoints.database_url)
    settings = serve_settings(tmp_path, endpoints, host="0.0.0.0")  # no page token
    with ServerThread(settings, endpoints):
        anna = _issue_token(endpoints.database_url, "anna")
        tab = browser.new_context(locale=locale).new_page()
        tab.add_init_script(f"localStorage.setItem('novaberg-token', '{anna}')")
        tab.goto(f"http://127.0.0.1:{settings.port}/")
        expect(tab.locator("#connection")).to_have_class(re.compile(r"\bonline\b"))
        _settings_panel(tab)
        expect(tab.get_by_test_id("model-source")).to_have_text(words["env"])
        expect(tab.get_by_test_id("model-operator-only")).to_have_text(words["operator_only"])
        expect(tab.get_by_test_id("model-form")).to_be_hidden()
        assert run_axe(tab, f"model-not-operator-{locale}") == {}
        _pictures(tab, shoot, "model-not-operator")
