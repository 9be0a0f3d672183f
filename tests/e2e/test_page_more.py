"""More of the chat page in headless Chromium against the real app: a failed turn kept in
the history with its reason and a retry, the impulse settings edited in the settings panel,
the demo-model banner, and card avatars in the character picker. axe-core stays without
serious violations in these states; screenshots land in artifacts/screenshots/."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from browser_kit import RULES, ServerThread, open_page, run_axe, serve_settings
from playwright.sync_api import Browser, Page, expect

from novaberg.api.page_api import DEMO_HINT
from novaberg.runtime.services import Endpoints
from novaberg.store.pipeline_log import KIND_FAILED_TURN, KIND_RAW_TURN

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]
ANSWER = "Schön, von dir zu hören!"
BREAK = "Bruchstelle"
"""A text whose first answer fails: the responder's model call raises once."""


def _write(tab: Page, text: str) -> None:
    tab.fill("#input", text)
    tab.press("#input", "Enter")


def _open_panel(tab: Page, label: str) -> None:
    tab.get_by_role("button", name=label, exact=True).click()


def _serious(found: dict[str, list[str]]) -> dict[str, list[str]]:
    return {k: v for k, v in found.items() if k in ("serious", "critical")}


def _rows(served: ServerThread, art: str, expected: int, timeout: float = 30.0) -> int:
    """Wait until `expected` history rows of `art` of the user are recorded."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(served.endpoints.database_url) as conn:
        while True:
            row = conn.execute(
                "SELECT count(*) FROM pipeline_log WHERE art = %s AND user_id = %s",
                (art, served.user),
            ).fetchone()
            count = int(row[0]) if row else 0
            if count >= expected or time.monotonic() > deadline:
                return count
            time.sleep(0.1)


@pytest.fixture
def breaking(tmp_path: Path, endpoints: Endpoints) -> Iterator[ServerThread]:
    """The page's server whose responder fails once for a text naming BREAK."""
    rules: list[dict[str, Any]] = [
        {"match": f"Antworte kurz und natürlich[\\s\\S]*{BREAK}", "fault": "error", "times": 1},
        *RULES,
    ]
    script = tmp_path / "breaking.json"
    script.write_text(json.dumps(rules), encoding="utf-8")
    settings = serve_settings(tmp_path, endpoints, script=script)
    with ServerThread(settings, endpoints) as server:
        yield server


def test_a_failed_turn_is_kept_and_can_be_sent_again(
    browser: Browser, breaking: ServerThread, shoot: Shoot
) -> None:
    page = open_page(browser, breaking.url)
    _write(page, f"Hier ist eine {BREAK}.")
    failed = page.locator(".msg.user.failed")
    expect(failed).to_have_count(1)
    expect(failed).to_contain_text("keine Antwort")
    assert _rows(breaking, KIND_FAILED_TURN, 1) == 1, "the failure was recorded"

    page.reload()
    expect(page.locator("#connection")).to_have_text("verbunden")
    kept = page.locator(".msg.user.history.failed")
    expect(kept).to_have_count(1)
    expect(kept.locator(".text")).to_have_text(f"Hier ist eine {BREAK}.")
    expect(kept.locator(".reason")).to_contain_text(
        "keine Antwort: Das Sprachmodell war nicht erreichbar."
    )
    expect(page.locator(".msg.nova")).to_have_count(0)
    found = run_axe(page, "failed-turn-after-reload")
    shoot(page, "failed-turn-after-reload")

    kept.get_by_role("button", name="Erneut senden").click()
    expect(kept.get_by_role("button", name="Erneut senden")).to_have_count(0)
    expect(page.locator(".msg.nova")).to_have_count(1)
    expect(page.locator(".msg.nova").last).to_contain_text(ANSWER)
    resent = page.locator(".msg.user:not(.history)")
    expect(resent).to_have_count(1)
    expect(resent.locator(".text")).to_have_text(f"Hier ist eine {BREAK}.")
    expect(page.locator(".msg.user.pending")).to_have_count(0)
    assert _rows(breaking, KIND_RAW_TURN, 1) == 1, "the resent turn was answered and recorded"
    shoot(page, "failed-turn-resent")
    assert not _serious(found), found


def test_impulse_settings_are_edited_in_the_page(
    page: Page, served: ServerThread, shoot: Shoot
) -> None:
    _open_panel(page, "Einstellungen")
    form = page.get_by_test_id("panel-settings").locator("[data-role=impulse-form]")
    allowed = form.get_by_label("Nova darf von sich aus schreiben")
    per_day = form.get_by_label("Höchstens pro Tag")
    quiet = form.get_by_label("Ruhezeit")
    zone = form.get_by_label("Zeitzone")
    expect(allowed).to_be_checked()  # the defaults, from GET /settings
    expect(per_day).to_have_value("3")
    expect(quiet).to_have_value(served.settings.quiet_hours)
    expect(zone).to_have_value(served.settings.timezone)

    # keyboard only: Space toggles, Tab moves on, Enter saves
    allowed.focus()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    expect(per_day).to_be_focused()
    page.keyboard.press("Control+a")
    page.keyboard.type("5")
    page.keyboard.press("Tab")
    expect(quiet).to_be_focused()
    page.keyboard.press("Control+a")
    page.keyboard.type("25:00-07:00")  # no such hour: the API refuses it (422)
    page.keyboard.press("Enter")
    error = form.get_by_role("alert")
    expect(error).to_be_visible()
    expect(error).to_contain_text("Ruhezeit: erwartet HH:MM-HH:MM")
    expect(quiet).to_have_attribute("aria-invalid", "true")
    expect(form.get_by_role("status")).to_have_text("nicht gespeichert")
    serious = {"error": _serious(run_axe(page, "impulse-settings-error"))}
    shoot(page, "impulse-settings-error")

    quiet.focus()
    page.keyboard.press("Control+a")
    page.keyboard.type("22:30-06:45")
    page.keyboard.press("Tab")
    expect(zone).to_be_focused()
    page.keyboard.press("Control+a")
    page.keyboard.type("Mars/Olympus")  # unknown zone: refused as well
    page.keyboard.press("Enter")
    expect(error).to_contain_text("Zeitzone")
    expect(zone).to_have_attribute("aria-invalid", "true")
    expect(quiet).not_to_have_attribute("aria-invalid", "true")

    zone.focus()
    page.keyboard.press("Control+a")
    page.keyboard.type("Europe/Lisbon")
    page.keyboard.press("Enter")
    expect(form.get_by_role("status")).to_have_text("gespeichert")
    expect(error).to_be_hidden()
    with psycopg.connect(served.endpoints.database_url) as conn:
        row = conn.execute(
            "SELECT impulse, ruhezeit, zeitzone, pro_tag FROM impuls_einstellungen"
            " WHERE user_id = %s AND character_id = 'nova'",
            (served.user,),
        ).fetchone()
    assert row == (False, "22:30-06:45", "Europe/Lisbon", 5), row

    page.reload()
    expect(page.locator("#connection")).to_have_text("verbunden")
    _open_panel(page, "Einstellungen")
    expect(allowed).not_to_be_checked()
    expect(per_day).to_have_value("5")
    expect(quiet).to_have_value("22:30-06:45")
    expect(zone).to_have_value("Europe/Lisbon")
    serious["saved"] = _serious(run_axe(page, "impulse-settings-saved"))
    shoot(page, "impulse-settings-saved")
    assert not any(serious.values()), serious


@pytest.mark.model
def test_the_demo_model_shows_its_banner(
    browser: Browser, tmp_path: Path, endpoints: Endpoints, shoot: Shoot
) -> None:
    """The bundled tiny model answers: the banner says so with the one line that connects
    a real model; with another backend (scripted here) there is no banner."""
    settings = serve_settings(tmp_path, endpoints, llm="local", llm_timeout=120)
    with ServerThread(settings, endpoints) as server:
        page = open_page(browser, server.url)
        banner = page.locator("#demo-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Demo-Modell – verbinde ein echtes")
        line = banner.locator("code")
        expect(line).to_have_text(DEMO_HINT)
        assert "\n" not in line.inner_text(), "one line"
        _open_panel(page, "Einstellungen")
        expect(page.locator("[data-role=model]")).to_contain_text("(local)")
        serious = _serious(run_axe(page, "demo-banner"))
        shoot(page, "demo-banner")
        page.context.close()
    assert not serious, serious

    other = tmp_path / "scripted"
    other.mkdir()
    with ServerThread(serve_settings(other, endpoints), endpoints) as server:
        page = open_page(browser, server.url)
        expect(page.locator("[data-role=model]")).to_have_text("scripted (scripted)")
        expect(page.locator("#demo-banner")).to_be_hidden()
        page.context.close()


def _fetch(url: str, token: str | None) -> tuple[int, str, bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as res:
            return res.status, res.headers.get("Content-Type", ""), res.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read()


def test_a_card_picture_becomes_the_avatar_in_the_picker(
    page: Page, served: ServerThread, shoot: Shoot, card_png: Callable[..., bytes]
) -> None:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "Ylva Bildtest", "description": "Eine Malerin.", "first_mes": "Hej."},
    }
    avatars = page.locator("#character-avatars")
    nova = avatars.get_by_role("button", name="Nova", exact=True)
    expect(nova.locator(".initial")).to_have_text("N")  # no picture: a generated initial
    expect(nova).to_have_attribute("aria-pressed", "true")
    picker = page.get_by_test_id("character-picker")
    try:
        page.set_input_files(
            "#card-file",
            files=[{"name": "ylva.png", "mimeType": "image/png", "buffer": card_png(card)}],
        )
        expect(page.locator("#card-status")).to_have_text("Ylva Bildtest importiert")
        ylva = avatars.get_by_role("button", name="Ylva Bildtest")
        expect(ylva).to_have_attribute("aria-pressed", "true")
        expect(picker).to_have_value("ylva-bildtest")
        expect(ylva.locator("img")).to_have_attribute("src", re.compile(r"^blob:"))
        page.wait_for_function(
            """() => {
                const img = document.querySelector(".avatar[data-character='ylva-bildtest'] img");
                return img && img.complete && img.naturalWidth === 1;
            }"""
        )  # the picture itself, decoded by the browser
        expect(nova).to_have_attribute("aria-pressed", "false")

        token = page.evaluate("window.novaberg.token")
        url = f"{served.url}/characters/ylva-bildtest/avatar"
        status, kind, body = _fetch(url, token)
        assert (status, kind) == (200, "image/png"), (status, kind)
        assert body.startswith(b"\x89PNG\r\n\x1a\n") and b"IDAT" in body
        assert b"chara" not in body, "the card's text chunk is not served with the picture"
        assert _fetch(url, None)[0] == 401, "only with a token"
        missing = _fetch(f"{served.url}/characters/nova/avatar", token)
        assert missing[0] == 404 and b"kein_avatar" in missing[2]

        serious = _serious(run_axe(page, "avatar-picker"))
        shoot(page, "avatar-picker")
        nova.click()  # picking by avatar
        expect(picker).to_have_value("nova")
        ylva.focus()
        page.keyboard.press("Enter")
        expect(picker).to_have_value("ylva-bildtest")
        expect(ylva).to_have_attribute("aria-pressed", "true")
        page.reload()  # the picture is there after a reload too
        expect(page.locator("#connection")).to_have_text("verbunden")
        expect(ylva.locator("img")).to_have_attribute("src", re.compile(r"^blob:"))
        expect(nova.locator(".initial")).to_have_text("N")
        assert not serious, serious
    finally:
        with psycopg.connect(served.endpoints.database_url) as conn:
            conn.execute("DELETE FROM characters WHERE name = 'Ylva Bildtest'")
