"""A card's greeting on the page: an imported card whose `first_mes` says {{user}} and
{{char}} greets with the person's and the character's name filled in, marked as the card's
greeting under the character's name; the built-in Nova with an empty history shows none.
The greeting is only shown: the history stays empty."""

from __future__ import annotations

import json

import psycopg
import pytest
from browser_kit import ServerThread, run_axe
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

NAME = "Ebba Grußtest"


def _drop_card(page: Page, card: dict[str, object]) -> None:
    transfer = page.evaluate_handle(
        """text => {
            const dt = new DataTransfer();
            dt.items.add(new File([text], "ebba.json", {type: "application/json"}));
            return dt;
        }""",
        json.dumps(card),
    )
    page.dispatch_event("body", "drop", {"dataTransfer": transfer})


def test_an_imported_card_greets_with_the_names_filled_in(page: Page, served: ServerThread) -> None:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": NAME,
            "description": "Eine Fährfrau.",
            "first_mes": "Hej {{user}}! Ich bin {{char}}, steig ein.",
        },
    }
    messages = page.get_by_test_id("message-list")
    greeting = page.get_by_test_id("card-greeting")
    picker = page.get_by_test_id("character-picker")
    # the built-in Nova, history empty: no card greeting, as before
    expect(picker).to_have_value("nova")
    expect(messages.locator("li")).to_have_count(0)
    try:
        _drop_card(page, card)
        expect(page.locator("#card-status")).to_have_text(f"{NAME} importiert")
        expect(greeting).to_have_count(1)
        expect(greeting.locator(".text")).to_have_text(
            f"Hej {served.user}! Ich bin {NAME}, steig ein."
        )
        expect(greeting.locator(".badge")).to_contain_text(NAME)
        expect(greeting).not_to_contain_text("Nova")
        expect(messages.locator("li")).to_have_count(1)
        expect(messages.locator(".msg.nova")).to_have_count(0)  # not an answer of the model
        found = run_axe(page, "card-greeting")
        assert not {k: v for k, v in found.items() if k in ("serious", "critical")}, found

        picker.select_option("nova")  # Nova: still no greeting
        expect(messages.locator("li")).to_have_count(0)
        picker.select_option(label=NAME)  # back: the greeting again, the history still empty
        expect(greeting).to_have_count(1)
        character_id = picker.input_value()
        history = page.evaluate(
            """async id => {
                const token = document.querySelector('meta[name="novaberg-token"]').content
                    || localStorage.getItem("novaberg-token");
                const res = await fetch(`/history/${encodeURIComponent(id)}`,
                    {headers: {Authorization: `Bearer ${token}`}});
                return await res.json();
            }""",
            character_id,
        )
        assert history["eintraege"] == []
    finally:
        with psycopg.connect(served.endpoints.database_url) as conn:
            conn.execute("DELETE FROM characters WHERE name = %s", (NAME,))
