"""Characters as people expect them on the page, in German and in English (headless
Chromium, the real app, the scripted model): a card's alternate greetings browsable on the
greeting, the one answered kept as the opening; a chat imported for the character shown
before the live turns, speakers named; the character's name and avatar wherever the page
would say "Nova"; the editor writing a character with a picture and changing it, a built-in
one only copied. axe-core finds no violation at all in these states; screenshots land in
artifacts/screenshots/ (their paths are printed)."""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browser_kit import ServerThread, open_page, run_axe
from PIL import Image
from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]
LOCALES = ["de-DE", "en-GB"]

WORDS = {
    "de": {
        "badge": "Begrüßung aus der Karte",
        "next": "Nächste Begrüßung",
        "opening": "Begrüßung",
        "imported": "importiert aus sillytavern",
        "impulse": "{name} darf von sich aus schreiben",
        "placeholder": "Schreib {name} etwas",
        "new": "Neuer Charakter",
        "edit": "Bearbeiten",
        "save": "Speichern",
        "name": "Name",
        "greeting": "Begrüßung",
        "personality": "Persönlichkeit",
        "picture": "Bild (PNG, JPEG oder WebP, bis 512 KiB)",
        "no_name": "Ein Charakter braucht einen Namen.",
        "built_in": "Nova ist eingebaut und kann nicht geändert werden.",
        "copy": "Nova (Kopie)",
        "settings": "Einstellungen",
    },
    "en": {
        "badge": "greeting from the card",
        "next": "Next greeting",
        "opening": "Greeting",
        "imported": "imported from sillytavern",
        "impulse": "{name} may write unprompted",
        "placeholder": "Write to {name}",
        "new": "New character",
        "edit": "Edit",
        "save": "Save",
        "name": "Name",
        "greeting": "Greeting",
        "personality": "Personality",
        "picture": "Picture (PNG, JPEG or WebP, up to 512 KiB)",
        "no_name": "A character needs a name.",
        "built_in": "Nova is built in and cannot be changed.",
        "copy": "Nova (copy)",
        "settings": "Einstellungen",  # the tabs are the language engineer's (still German)
    },
}


def words(locale: str) -> dict[str, str]:
    return WORDS[locale.split("-")[0]]


def api(page: Page, method: str, path: str, body: Any = None, raw: str | None = None) -> Any:
    """A call of the page's API with the page's token, from inside the page."""
    result = page.evaluate(
        """async ([method, path, body, raw]) => {
            const headers = {Authorization: `Bearer ${window.novaberg.token}`};
            let payload;
            if (raw !== null) { headers["Content-Type"] = "application/json"; payload = raw; }
            else if (body !== null) { headers["Content-Type"] = "application/json";
                                      payload = JSON.stringify(body); }
            const res = await fetch(path, {method, headers, body: payload});
            return {status: res.status, body: res.status === 204 ? null : await res.json()};
        }""",
        [method, path, body, raw],
    )
    assert result["status"] < 300, result
    return result["body"]


def png(colour: tuple[int, int, int], size: int = 300) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (size, size), colour).save(out, format="PNG")
    return out.getvalue()


def recorded(page: Page, character_id: str, count: int) -> list[dict[str, Any]]:
    """The history once it holds `count` entries (the answer's row is written about a
    second after the answer; a bounded wait, a guard against a hang, not a measurement)."""
    for _ in range(300):
        entries: list[dict[str, Any]] = api(page, "GET", f"/history/{character_id}")["eintraege"]
        if len(entries) >= count:
            return entries
        page.wait_for_timeout(100)
    raise AssertionError(f"the history holds {entries}")


def no_violations(page: Page, label: str) -> None:
    found = run_axe(page, label)
    assert not found, found


def card(name: str, **data: Any) -> str:
    return json.dumps(
        {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": name, **data}}
    )


def open_character(browser: Browser, served: ServerThread, locale: str, character: str) -> Page:
    return open_page(browser, f"{served.url}/?charakter={character}", locale=locale)


@pytest.mark.parametrize("locale", LOCALES)
def test_alternate_greetings_browse_and_the_answered_one_opens(
    browser: Browser, served: ServerThread, shoot: Shoot, locale: str
) -> None:
    w = words(locale)
    first = open_page(browser, served.url, locale=locale)
    made = api(
        first,
        "POST",
        "/characters",
        raw=card(
            "Tilda",
            first_mes="Hej {{user}}!",
            alternate_greetings=["Da bist du ja, {{user}}. Ich bin {{char}}.", "Guten Morgen."],
        ),
    )
    page = open_character(browser, served, locale, made["character_id"])
    greeting = page.get_by_test_id("card-greeting")
    expect(greeting.locator(".text")).to_have_text(f"Hej {served.user}!")
    expect(greeting.locator(".badge")).to_contain_text(f"Tilda · {w['badge']}")
    position = page.get_by_test_id("greeting-position")
    expect(position).to_have_text("1/3")
    page.get_by_role("button", name=w["next"]).click()
    expect(position).to_have_text("2/3")
    chosen = f"Da bist du ja, {served.user}. Ich bin Tilda."
    expect(greeting.locator(".text")).to_have_text(chosen)
    no_violations(page, f"greetings-browse-{locale}")
    print("screenshot:", shoot(page, f"greetings-browse-{locale}"))

    page.fill("#input", "Hallo Tilda")
    page.press("#input", "Enter")
    expect(page.locator("#messages .msg.nova:not(.card-greeting)")).to_have_count(1)
    expect(page.get_by_test_id("greeting-browse")).to_have_count(0)  # answered: kept as it is
    history = recorded(page, made["character_id"], 2)
    assert history[0]["nachricht"] == chosen  # the opening: what the person saw
    assert history[0]["reiz_herkunft"] == "eroeffnung"
    assert history[1]["eingabe"] == "Hallo Tilda"

    page.reload()  # the opening is part of the conversation now, not a card greeting
    expect(page.locator("#connection")).to_have_class(re.compile(r"\bonline\b"))
    opening = page.locator("#messages .msg.nova").first
    expect(opening.locator(".text")).to_have_text(chosen)
    expect(opening.locator(".badge")).to_contain_text(w["opening"])
    expect(page.get_by_test_id("card-greeting")).to_have_count(0)
    no_violations(page, f"greetings-opening-{locale}")
    print("screenshot:", shoot(page, f"greetings-opening-{locale}"))


SILLYTAVERN = [
    {"user_name": "Kai", "character_name": "Tove", "create_date": "2024-06-20@15h45m00s"},
    {"name": "Kai", "is_user": True, "send_date": "June 20, 2024 3:45pm", "mes": "Hallo Tove"},
    {"name": "Tove", "is_user": False, "send_date": "June 20, 2024 3:46pm", "mes": "Hej Kai!"},
    {"name": "Kai", "is_user": True, "send_date": "June 20, 2024 3:47pm", "mes": "Wie geht's?"},
]


@pytest.mark.parametrize("locale", LOCALES)
def test_an_imported_chat_is_shown_before_the_live_turns(
    browser: Browser, served: ServerThread, shoot: Shoot, locale: str
) -> None:
    w = words(locale)
    first = open_page(browser, served.url, locale=locale)
    made = api(first, "POST", "/characters", raw=card("Tove", first_mes="Hej!"))
    lines = "\n".join(json.dumps(line) for line in SILLYTAVERN)
    first.evaluate(
        """async ([id, body]) => {
            const res = await fetch(`/import/chat?character=${id}`, {method: "POST", body,
                headers: {Authorization: `Bearer ${window.novaberg.token}`}});
            if (!res.ok) throw new Error(await res.text());
        }""",
        [made["character_id"], lines],
    )
    page = open_character(browser, served, locale, made["character_id"])
    imported = page.get_by_test_id("imported-turn")
    expect(imported).to_have_count(3)
    expect(imported.locator(".text")).to_have_text(["Hallo Tove", "Hej Kai!", "Wie geht's?"])
    expect(imported.locator(".speaker-name")).to_have_text(["Kai", "Tove", "Kai"])
    expect(imported.nth(0)).to_have_class(re.compile(r"\buser\b"))
    expect(imported.nth(1)).to_have_class(re.compile(r"\bnova\b"))
    expect(imported.first.locator(".badge")).to_have_text(w["imported"])
    expect(page.get_by_test_id("card-greeting")).to_have_count(0)  # not an empty conversation

    page.fill("#input", "Und heute?")
    page.press("#input", "Enter")
    live_answer = page.locator("#messages .msg.nova:not(.imported)")
    expect(live_answer).to_have_count(1)
    order = page.locator("#messages > li").evaluate_all(
        "items => items.map(li => li.classList.contains('imported') ? 'imported' : 'live')"
    )
    assert order == ["imported"] * 3 + ["live"] * 2, order
    no_violations(page, f"imported-chat-{locale}")
    print("screenshot:", shoot(page, f"imported-chat-{locale}"))


@pytest.mark.parametrize("locale", LOCALES)
def test_the_characters_name_and_avatar_everywhere(
    browser: Browser, served: ServerThread, shoot: Shoot, locale: str
) -> None:
    w = words(locale)
    first = open_page(browser, served.url, locale=locale)
    made = api(first, "POST", "/new-character", {"name": "Lena", "beschreibung": "Gärtnerin."})
    api(
        first,
        "PUT",
        f"/characters/{made['character_id']}/avatar",
        {"bild": base64.b64encode(png((20, 120, 60))).decode()},
    )
    page = open_character(browser, served, locale, made["character_id"])
    expect(page.locator("#input")).to_have_attribute(
        "placeholder", re.compile(w["placeholder"].format(name="Lena"))
    )
    page.fill("#input", "Ich ziehe nach Madrid!")
    page.press("#input", "Enter")
    answer = page.locator("#messages .msg.nova")
    expect(answer).to_have_count(1)
    expect(answer.locator(".speaker-name")).to_have_text("Lena")
    expect(answer.locator(".speaker .avatar img")).to_have_attribute("src", re.compile("^blob:"))
    panel = page.get_by_test_id("panel-emotions")
    expect(panel.locator(".legend")).to_contain_text("Lena")
    expect(panel.locator(".legend")).not_to_contain_text("Nova")
    expect(panel.locator("[data-role=now]")).to_contain_text(re.compile(r"^Lena\b"))
    expect(panel.locator("svg").first).to_have_attribute("aria-label", re.compile("Lena"))
    no_violations(page, f"name-avatar-chat-{locale}")
    print("screenshot:", shoot(page, f"name-avatar-chat-{locale}"))
    page.locator(".tabs button[data-panel=panel-settings]").click()
    settings = page.get_by_test_id("panel-settings")
    expect(settings).to_contain_text(w["impulse"].format(name="Lena"))
    expect(settings.locator("[data-chars-text]")).not_to_contain_text(["Nova", "Nova", "Nova"])
    no_violations(page, f"name-avatar-settings-{locale}")
    print("screenshot:", shoot(page, f"name-avatar-settings-{locale}"))


@pytest.mark.parametrize("locale", LOCALES)
def test_the_editor_writes_a_character_with_a_picture_and_changes_it(
    browser: Browser, served: ServerThread, shoot: Shoot, locale: str
) -> None:
    w = words(locale)
    page = open_page(browser, served.url, locale=locale)
    dialog = page.get_by_test_id("character-editor")

    expect(page.get_by_test_id("character-picker")).to_have_value("nova")
    page.get_by_test_id("character-edit").click()  # Nova is built in: a copy is offered
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(w["built_in"])
    expect(dialog.get_by_label(w["name"], exact=True)).to_have_value(w["copy"])
    no_violations(page, f"editor-copy-{locale}")
    print("screenshot:", shoot(page, f"editor-copy-{locale}"))
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    page.get_by_test_id("character-new").click()
    expect(dialog).to_be_visible()
    dialog.get_by_test_id("editor-save").click()  # no name: refused, the field marked
    expect(page.get_by_test_id("editor-error")).to_have_text(w["no_name"])
    expect(page.get_by_test_id("editor-name")).to_have_attribute("aria-invalid", "true")
    no_violations(page, f"editor-refused-{locale}")
    print("screenshot:", shoot(page, f"editor-refused-{locale}"))

    page.get_by_test_id("editor-name").fill("Ida Sund")
    page.get_by_test_id("editor-greeting").fill("Moin {{user}}, ich bin {{char}}.")
    page.get_by_test_id("editor-avatar").set_input_files(
        {"name": "ida.png", "mimeType": "image/png", "buffer": png((200, 60, 20))}
    )
    no_violations(page, f"editor-new-{locale}")
    print("screenshot:", shoot(page, f"editor-new-{locale}"))
    page.get_by_test_id("editor-save").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("character-picker")).to_have_value("ida-sund")
    expect(
        page.locator("#character-avatars button[data-character=ida-sund] img")
    ).to_have_attribute("src", re.compile("^blob:"))
    expect(page.get_by_test_id("card-greeting").locator(".text")).to_have_text(
        f"Moin {served.user}, ich bin Ida Sund."
    )

    page.get_by_test_id("character-edit").click()
    expect(page.get_by_test_id("editor-name")).to_have_value("Ida Sund")
    dialog.get_by_label(w["personality"]).fill("ruhig, neugierig")
    page.get_by_test_id("editor-name").fill("Ida")
    page.get_by_test_id("editor-save").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("character-picker").locator("option:checked")).to_have_text("Ida")
    expect(page.get_by_test_id("card-greeting").locator(".badge")).to_contain_text("Ida ·")
    record = api(page, "GET", "/characters/ida-sund")
    assert (record["name"], record["persoenlichkeit"], record["avatar"]) == (
        "Ida",
        "ruhig, neugierig",
        True,
    )
    no_violations(page, f"editor-saved-{locale}")
    print("screenshot:", shoot(page, f"editor-saved-{locale}"))
