"""The chat page passes its own Content-Security-Policy: loaded, a conversation, every
panel, a card imported with its picture (a `blob:` avatar) and axe-core — and not one
`securitypolicyviolation`. An inline script, which the policy forbids, is refused (so the
listener would have heard one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from browser_kit import WAIT_MS, ServerThread, run_axe
from playwright.sync_api import Browser, Error, Page, expect

from novaberg.api.security_headers import PAGE_CSP

pytestmark = pytest.mark.browser

RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.effectiveDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
});
"""
"""Runs before any script of the page (an init script is not subject to the page's CSP)."""


def _violations(tab: Page) -> list[str]:
    return list(tab.evaluate("window.__violations"))


def test_the_page_runs_under_its_policy_without_a_violation(
    browser: Browser, served: ServerThread, card_png: Callable[..., bytes]
) -> None:
    context = browser.new_context(locale="de-DE")
    context.add_init_script(RECORD_VIOLATIONS)
    tab = _open(context, served.url)
    answer = tab.request.get(served.url)
    assert answer.headers["content-security-policy"] == PAGE_CSP

    tab.fill("#input", "Ich ziehe nach Madrid")
    tab.press("#input", "Enter")
    expect(tab.locator(".msg.nova")).to_have_count(1)
    expect(tab.locator(".msg.nova strong")).to_have_text("dir")  # markdown as markup
    for label in ("Gedächtnis", "Aufgaben", "Ablauf", "Einstellungen", "Gefühle"):
        tab.get_by_role("button", name=label, exact=True).click()
    expect(tab.get_by_test_id("panel-emotions").locator("svg").first).to_be_visible()

    card: dict[str, Any] = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "Ylva Richtlinie", "description": "Eine Malerin.", "first_mes": "Hej."},
    }
    tab.set_input_files(
        "#card-file", files=[{"name": "y.png", "mimeType": "image/png", "buffer": card_png(card)}]
    )
    tab.wait_for_function(
        """() => {
            const img = document.querySelector(".avatar[data-character='ylva-richtlinie'] img");
            return img && img.complete && img.naturalWidth === 1;
        }"""
    )  # a blob: picture, decoded
    run_axe(tab, "under-csp")
    assert _violations(tab) == []

    with pytest.raises(Error):
        tab.add_script_tag(content="window.__inline = 1;")
    assert tab.evaluate("window.__inline === undefined"), "an inline script did not run"
    assert any(v.startswith("script-src") for v in _violations(tab)), _violations(tab)


def _open(context: Any, url: str) -> Page:
    tab: Page = context.new_page()
    tab.set_default_timeout(WAIT_MS)
    expect.set_options(timeout=WAIT_MS)
    tab.goto(url)
    expect(tab.locator("#connection")).to_have_text("verbunden")
    return tab
