"""The page shows what an answer says beyond its text: a yes/no question of a task agent with
the buttons Ja and Nein ("Ja" goes in as an ordinary message), and a receipt under the answer
for the change stored, linking to the tasks panel; and its switch pauses the character and
activates it again — under the page's CSP, without a single violation, and without a
serious accessibility finding."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib
from browser_kit import RULES, WAIT_MS, ServerThread, run_axe, serve_settings
from playwright.sync_api import Browser, expect

from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import keys

pytestmark = pytest.mark.browser

TASK = "Setz Milch auf die Einkaufsliste"
QUESTION = "Eine Einkaufsliste gibt es noch nicht. Soll ich sie anlegen?"
DONE = "Erledigt: Milch steht auf der neuen Einkaufsliste."
RESPONDER = r"Antworte kurz und natürlich.*\[AKTUELLER PROMPT\]\n"

TASK_RULES: list[dict[str, Any]] = [
    {
        "match": re.escape(TASK),
        "schema": "RouterDecision",
        "output": {"management_action": "agent", "management_target": "notizen"},
    },
    {
        "match": "Äußerung des Nutzers: Setz Milch",
        "schema": "NotesClassification",
        "output": {"action": "add_content", "target": "Einkaufsliste", "elemente": ["Milch"]},
    },
    {"match": RESPONDER + re.escape(TASK) + "$", "output": QUESTION},
    {"match": RESPONDER + "Ja$", "output": DONE},
]

RECORD = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.effectiveDirective} ${e.blockedURI}`);
});
"""


@pytest.fixture
def served_tasks(tmp_path: Path, endpoints: Endpoints) -> Iterator[ServerThread]:
    """`novaberg serve` whose scripted model sends the shopping-list task to the notes agent."""
    rules = tmp_path / "task_rules.json"
    rules.write_text(json.dumps([*TASK_RULES, *RULES]), encoding="utf-8")
    with ServerThread(serve_settings(tmp_path, endpoints, script=rules), endpoints) as server:
        yield server


def test_a_yes_no_question_gets_buttons_and_the_stored_change_a_receipt(
    browser: Browser, served_tasks: ServerThread
) -> None:
    context = browser.new_context(locale="de-DE")
    context.add_init_script(RECORD)
    tab = open_page_in(context, served_tasks.url)

    tab.fill("#input", TASK)
    tab.press("#input", "Enter")
    question = tab.locator(".msg.nova.asks")
    expect(question).to_have_count(1)
    expect(question.locator(".text")).to_have_text(QUESTION)
    expect(question.locator(".badge")).to_have_text("Rückfrage")
    buttons = question.get_by_role("group", name="Antwort auf die Rückfrage")
    expect(buttons.get_by_role("button")).to_have_text(["Ja", "Nein"])
    found = run_axe(tab, "question-buttons")
    assert not {k: v for k, v in found.items() if k in ("serious", "critical")}, found

    with tab.expect_request(lambda r: r.method == "POST" and r.url.endswith("/chat")) as sent:
        buttons.get_by_role("button", name="Ja").click()
    body = json.loads(sent.value.post_data or "{}")
    assert body["text"] == "Ja", "the button sends the word as an ordinary message"
    expect(tab.locator(".msg.user .text").last).to_have_text("Ja")
    expect(tab.locator(".quick-answers")).to_have_count(0)  # answered: no buttons left

    done = tab.locator(".msg.nova").filter(has_text=DONE)
    expect(done).to_have_count(1)
    receipt = done.get_by_test_id("receipts").get_by_role("link")
    expect(receipt).to_have_text(["✓ Einkaufsliste: + Milch"])
    expect(done.locator(".quick-answers")).to_have_count(0)
    found = run_axe(tab, "receipt")
    assert not {k: v for k, v in found.items() if k in ("serious", "critical")}, found

    receipt.click()
    tasks = tab.get_by_test_id("panel-tasks")
    expect(tasks).to_be_visible()
    expect(tasks.locator("[data-kind='notes'] h3")).to_be_focused()
    expect(tasks.locator("[data-kind='notes'] ul")).to_contain_text("Einkaufsliste: Milch")
    assert tab.evaluate("window.__violations") == []


def test_the_switch_pauses_the_character_and_activating_answers_what_waited(
    browser: Browser, served: ServerThread, endpoints: Endpoints
) -> None:
    context = browser.new_context(locale="de-DE")
    context.add_init_script(RECORD)
    tab = open_page_in(context, served.url)
    switch = tab.get_by_test_id("character-pause")
    expect(switch).to_have_text("Nova pausieren")
    switch.click()
    expect(switch).to_have_text("Nova aktivieren")
    expect(switch).to_have_attribute("aria-pressed", "true")
    expect(tab.get_by_test_id("paused-banner")).to_contain_text("Nova ist pausiert")

    tab.fill("#input", "Ich ziehe nach Madrid")
    tab.press("#input", "Enter")
    expect(tab.locator(".msg.user.pending")).to_have_count(1)
    held = keys.parked_events(Pair(served.user, "nova"))
    client = redis_lib.Redis.from_url(endpoints.redis_url)
    deadline = time.monotonic() + WAIT_MS / 1000
    while not client.llen(held):  # stored by Path 1, then held
        assert time.monotonic() < deadline, "the message was never held"
        time.sleep(0.1)
    client.close()
    expect(tab.locator(".msg.nova")).to_have_count(0)
    found = run_axe(tab, "paused")
    assert not {k: v for k, v in found.items() if k in ("serious", "critical")}, found

    switch.click()
    expect(switch).to_have_text("Nova pausieren")
    expect(tab.get_by_test_id("paused-banner")).to_have_text(
        "Nova ist wieder da und antwortet auf 1 wartende Nachricht."
    )
    expect(tab.locator(".msg.nova")).to_have_count(1)
    expect(tab.locator(".msg.user.pending")).to_have_count(0)
    assert tab.evaluate("window.__violations") == []


def open_page_in(context: Any, url: str) -> Any:
    tab = context.new_page()
    tab.set_default_timeout(WAIT_MS)
    expect.set_options(timeout=WAIT_MS)
    tab.goto(url)
    expect(tab.locator("#connection")).to_have_text("verbunden")
    return tab


def test_a_slow_character_list_does_not_undo_the_switch(
    browser: Browser, served: ServerThread
) -> None:
    """On a slow machine the page's list of characters (which says who is paused) can
    answer after the person flipped the switch, with the state from before: the switch
    keeps what the flip's own answer said."""
    tab = browser.new_context(locale="de-DE").new_page()
    tab.set_default_timeout(WAIT_MS)
    lists: list[Any] = []
    tab.route("**/characters?limit=*", lambda route: lists.append(route))
    tab.goto(served.url)
    for _ in range(400):  # 20 s
        if lists:
            break
        tab.wait_for_timeout(50)
    assert lists, "the page never asked for its characters"
    answers = [(route, route.fetch()) for route in lists]  # read before the flip
    switch = tab.get_by_test_id("character-pause")
    switch.click()
    expect(switch).to_have_text("Nova aktivieren")
    for route, answer in answers:
        with tab.expect_event("requestfinished", lambda r: "/characters?limit=" in r.url):
            route.fulfill(response=answer)
    tab.unroute("**/characters?limit=*")
    tab.wait_for_timeout(500)  # the list's answer is applied (or set aside) right after
    expect(switch).to_have_text("Nova aktivieren")
    switch.click()  # the next test finds Nova active again
    expect(switch).to_have_text("Nova pausieren")
