"""Chats on the page, in German and in English: a new chat starts empty (an imported
character greets again), switching shows each chat's own messages, rename and delete in
place, and the export downloads Markdown and JSON. axe-core finds no violation at all in
these states; screenshots land in artifacts/screenshots/ (their paths are printed)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from browser_kit import ServerThread, open_page, run_axe
from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]

ANSWERS = "#messages .msg.nova:not(.opening)"
"""Nova's answers on the page; an answered card greeting (the opening) is not one."""

WORDS = {
    "de-DE": {
        "new": "Neuer Chat",
        "created": "Neuer Chat mit Nova begonnen.",
        "rename": "Umbenennen",
        "save": "Speichern",
        "renamed": "Chat umbenannt.",
        "delete": "Chat löschen",
        "yes": "Ja, löschen",
        "confirm": "„Umzug“ löschen? Der Chat verschwindet aus der Liste; was Nova sich "
        "daraus gemerkt hat, bleibt.",
        "deleted": "Chat gelöscht.",
        "markdown": "Als Markdown",
        "json": "Als JSON",
        "group": "Chats mit Nova",
        "exported": "Umzug.md heruntergeladen.",
        "md_line": "exportiert am",
    },
    "en-GB": {
        "new": "New chat",
        "created": "New chat with Nova started.",
        "rename": "Rename",
        "save": "Save",
        "renamed": "Chat renamed.",
        "delete": "Delete chat",
        "yes": "Yes, delete",
        "confirm": "Delete “Umzug”? The chat leaves the list; what Nova remembers from it stays.",
        "deleted": "Chat deleted.",
        "markdown": "As Markdown",
        "json": "As JSON",
        "group": "Chats with Nova",
        "exported": "Umzug.md downloaded.",
        "md_line": "exported on",
    },
}
LOCALES = pytest.mark.parametrize("locale", ["de-DE", "en-GB"])


def _say(page: Page, text: str, answers: int) -> None:
    page.fill("#input", text)
    page.press("#input", "Enter")
    expect(page.locator(ANSWERS)).to_have_count(answers)


def _texts(page: Page) -> list[str]:
    return page.locator("#messages .msg .text").all_inner_texts()


@LOCALES
def test_new_chat_switching_rename_delete_and_export(
    browser: Browser, served: ServerThread, shoot: Shoot, locale: str, tmp_path: Path
) -> None:
    words = WORDS[locale]
    page = open_page(browser, served.url, locale=locale, accept_downloads=True)
    chats = page.get_by_test_id("chats")
    picker = page.get_by_test_id("chat-picker")
    status = page.get_by_test_id("chat-status")
    expect(chats).to_have_attribute("aria-label", words["group"])
    expect(picker.locator("option")).to_have_count(1)

    _say(page, "Ich ziehe nach Madrid.", 1)
    expect(picker.locator("option")).to_contain_text(["Ich ziehe nach Madrid."])
    first = picker.input_value()

    page.get_by_role("button", name=words["new"]).click()
    expect(status).to_have_text(words["created"])
    expect(page.locator("#messages li")).to_have_count(0)  # Nova: no greeting, nothing else
    expect(picker.locator("option")).to_have_count(2)
    expect(page.locator("#input")).to_be_focused()
    second = picker.input_value()
    assert second != first
    _say(page, "Erzähl mir was über Boote.", 1)
    expect(picker.locator(f'option[value="{second}"]')).to_contain_text("Erzähl mir was über")
    assert not any("Madrid" in text for text in _texts(page))
    found = run_axe(page, f"chats-two-{locale}")
    print("screenshot:", shoot(page, "chats-two"))
    assert found == {}, found

    _wait_for_turns(served, 2)
    picker.select_option(first)  # back: only the first chat's turn
    expect(page.locator("#messages .msg.user .text")).to_have_text(["Ich ziehe nach Madrid."])
    expect(page.locator(ANSWERS)).to_have_count(1)
    picker.select_option(second)
    expect(page.locator("#messages .msg.user .text")).to_have_text(["Erzähl mir was über Boote."])

    page.get_by_role("button", name=words["rename"]).click()
    title = page.locator("#chat-title")
    expect(title).to_be_focused()
    title.fill("Umzug")
    found = run_axe(page, f"chats-rename-{locale}")
    print("screenshot:", shoot(page, "chats-rename"))
    assert found == {}, found
    page.get_by_role("button", name=words["save"]).click()
    expect(status).to_have_text(words["renamed"])
    expect(picker.locator(f'option[value="{second}"]')).to_contain_text("Umzug")

    with page.expect_download() as md_download:
        page.get_by_role("button", name=words["markdown"]).click()
    md_path = tmp_path / "chat.md"
    md_download.value.save_as(md_path)
    assert md_download.value.suggested_filename == "Umzug.md"
    markdown = md_path.read_text(encoding="utf-8")
    assert markdown.startswith("# Umzug\n") and words["md_line"] in markdown
    assert "Erzähl mir was über Boote." in markdown and "Madrid" not in markdown
    expect(status).to_have_text(words["exported"])
    with page.expect_download() as json_download:
        page.get_by_role("button", name=words["json"]).click()
    json_path = tmp_path / "chat.json"
    json_download.value.save_as(json_path)
    document = json.loads(json_path.read_text(encoding="utf-8"))
    assert (document["format"], document["version"]) == ("novaberg-chat", 1)
    assert [m["rolle"] for m in document["nachrichten"]] == ["user", "assistant"]
    assert document["nachrichten"][0]["text"] == "Erzähl mir was über Boote."

    page.get_by_role("button", name=words["delete"]).click()
    confirm = page.get_by_test_id("chat-confirm")
    expect(confirm).to_contain_text(words["confirm"])
    found = run_axe(page, f"chats-delete-{locale}")
    print("screenshot:", shoot(page, "chats-delete"))
    assert found == {}, found
    page.get_by_role("button", name=words["yes"]).click()
    expect(status).to_have_text(words["deleted"])
    expect(picker.locator("option")).to_have_count(1)
    expect(picker).to_have_value(first)
    expect(page.locator("#messages .msg.user .text")).to_have_text(["Ich ziehe nach Madrid."])

    page.reload()  # the open chat is the server's: the same after a reload
    expect(picker).to_have_value(first)
    expect(page.locator("#messages .msg.user .text")).to_have_text(["Ich ziehe nach Madrid."])

    page.set_viewport_size({"width": 390, "height": 844})  # a phone: nothing cut off
    box = picker.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    found = run_axe(page, f"chats-phone-{locale}")
    print("screenshot:", shoot(page, "chats-phone"))
    assert found == {}, found


def _wait_for_turns(served: ServerThread, count: int) -> None:
    """Guard: the answered turns are written to the history (a moment after the answer);
    an answered card greeting's row (the opening, written by the page) is not a turn."""
    deadline = time.monotonic() + 30
    with psycopg.connect(served.endpoints.database_url) as conn:
        while True:
            row = conn.execute(
                "SELECT count(*) FROM pipeline_log WHERE art = 'turn_roh' AND user_id = %s"
                " AND coalesce(inhalt->>'herkunft', '') <> 'eroeffnung'",
                (served.user,),
            ).fetchone()
            if row and row[0] >= count:
                return
            assert time.monotonic() < deadline, "the turn never reached the history"
            time.sleep(0.1)


def _import_card(page: Page, name: str) -> None:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": name, "description": "Eine Fährfrau.", "first_mes": "Hej {{user}}!"},
    }
    transfer = page.evaluate_handle(
        """text => {
            const dt = new DataTransfer();
            dt.items.add(new File([text], "card.json", {type: "application/json"}));
            return dt;
        }""",
        json.dumps(card),
    )
    page.dispatch_event("body", "drop", {"dataTransfer": transfer})


@LOCALES
def test_a_new_chat_greets_again(
    browser: Browser, served: ServerThread, shoot: Shoot, locale: str
) -> None:
    name = f"Ebba Chat {locale}"
    page = open_page(browser, served.url, locale=locale)
    greeting = page.get_by_test_id("card-greeting")
    picker = page.get_by_test_id("chat-picker")
    try:
        _import_card(page, name)
        expect(greeting).to_have_count(1)
        _say(page, "Hallo Ebba", 1)
        first = picker.input_value()
        _wait_for_turns(served, 1)
        page.reload()
        expect(page.locator(ANSWERS)).to_have_count(1)
        expect(greeting).to_have_count(0)  # the conversation has an entry: no greeting

        page.get_by_role("button", name=WORDS[locale]["new"]).click()
        expect(greeting).to_have_count(1)
        expect(greeting.locator(".text")).to_have_text(f"Hej {served.user}!")
        expect(page.locator(ANSWERS)).to_have_count(0)
        expect(picker.locator("option")).to_have_count(2)
        found = run_axe(page, f"chats-greeting-{locale}")
        print("screenshot:", shoot(page, "chats-greeting"))
        assert found == {}, found
        picker.select_option(first)  # the first chat: its turn, no greeting
        expect(page.locator(ANSWERS)).to_have_count(1)
        expect(greeting).to_have_count(0)
    finally:
        with psycopg.connect(served.endpoints.database_url) as conn:
            conn.execute("DELETE FROM characters WHERE name = %s", (name,))


def test_a_long_chat_name_fits_a_phone(browser: Browser, served: ServerThread) -> None:
    """A chat is named by its first message's first words as soon as it is sent; on a phone
    that name must not widen the header past the screen."""
    page = open_page(browser, served.url, viewport={"width": 390, "height": 844}, is_mobile=True)
    picker = page.get_by_test_id("chat-picker")
    _say(page, "Ich ziehe nächsten Monat nach Madrid und freue mich sehr darauf", 1)
    expect(picker.locator("option:checked")).to_contain_text("Ich ziehe nächsten Monat")
    sizes = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert sizes[0] <= sizes[1], sizes
