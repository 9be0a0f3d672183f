"""The real chat page in headless Chromium against the real app (scripted model only):
three messages typed quickly get one answer naming all three (the first one's turn is
superseded before its answer leaves), Nova's panel updates, another device's utterance
and answer are marked, a failed turn offers a retry that works, and a dropped connection
catches up."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from playwright.sync_api import Page, expect, sync_playwright

from novaberg.api.app import create_app
from novaberg.config import Settings, load_settings
from novaberg.runtime.services import Endpoints

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 30_000

APPROVE = {"score": 0.05, "direktiven_score": 0.05, "begruendung": ""}
RULES = [
    # plain conversation: a hash-derived router decision could start a task agent, and a
    # turn in which an agent acted is never superseded
    {
        "match": ".*",
        "schema": "RouterDecision",
        "output": {"needs_memory": True, "momentum": "mid", "management_action": ""},
    },
    {"match": ".*", "schema": "JuristVerdict", "output": APPROVE},
    {"match": ".*", "schema": "PsychologistVerdict", "output": APPROVE},
    {"match": ".*", "schema": "EthicistVerdict", "output": APPROVE},
    {
        "match": ".*",
        "schema": "ThinkerCheck",
        "output": {"ergebnis": "OK", "probleme": "", "korrigierte_antwort": ""},
    },
    # Nova takes a moment to answer, so a person can type while a turn runs.
    {
        "match": "Antworte kurz und natürlich",
        "output": "Schön, von dir zu hören!",
        "latency_ms": 2000,
    },
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerThread:
    """`novaberg serve` in a thread: API, page and consumers in one process."""

    def __init__(self, settings: Settings, endpoints: Endpoints) -> None:
        self.app = create_app(settings, endpoints=endpoints, consumers=True)
        config = uvicorn.Config(
            self.app, host=settings.host, port=settings.port, log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://{settings.host}:{settings.port}"

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)


@pytest.fixture
def served(tmp_path: Path, endpoints: Endpoints) -> Iterator[ServerThread]:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES), encoding="utf-8")
    settings = load_settings(
        home=tmp_path,
        redis_url=endpoints.redis_url,
        database_url=endpoints.database_url,
        llm="scripted",
        script=rules,
        embed_dim=384,
        pixie=False,
        host="127.0.0.1",
        port=_free_port(),
        default_user=f"gast{int(time.time() * 1000) % 1_000_000}",
    )
    with ServerThread(settings, endpoints) as server:
        yield server


@pytest.fixture
def page(served: ServerThread) -> Iterator[Page]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            tab = browser.new_page()
            tab.set_default_timeout(WAIT_MS)
            expect.set_options(timeout=WAIT_MS)  # expectations wait as long as actions
            tab.goto(served.url)
            expect(tab.locator("#connection")).to_have_text("verbunden")
            yield tab
        finally:
            browser.close()


def _write(page: Page, text: str) -> None:
    page.fill("#input", text)
    page.press("#input", "Enter")


def _ids(page: Page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.id || '')")


def test_three_quick_messages_get_one_answer_naming_all_three(
    page: Page, served: ServerThread
) -> None:
    for text in ("Hey", "Achso, ich wollte sagen...", "...dass ich morgen nicht kann"):
        _write(page, text)
    answers = page.locator(".msg.nova")
    expect(answers).to_have_count(1)
    expect(page.locator(".msg.user.pending")).to_have_count(0)
    user_ids = _ids(page, ".msg.user")
    assert len(user_ids) == 3 and all(user_ids)
    assert answers.first.get_attribute("data-ids") == ",".join(user_ids), "names all three"
    assert page.evaluate("novaberg.open.size") == 0, "every id has its outcome"
    expect(answers.first).to_contain_text("Schön, von dir zu hören!")
    expect(page.locator(".msg.user.failed")).to_have_count(0)
    expect(page.locator(".badge")).to_have_count(0)  # the answer was to this tab
    expect(page.locator("#emotion")).not_to_have_text("–")
    expect(page.locator("#arousal")).not_to_have_text("–")
    expect(page.locator("#stage")).to_be_hidden()


def test_other_device_failure_retry_and_catch_up(page: Page, served: ServerThread) -> None:
    token = served.app.state.chat.page_token
    # another device of the same person writes: its utterance and answer are marked
    response = httpx.post(
        f"{served.url}/chat",
        json={"character_id": "nova", "text": "vom Handy", "client_id": "handy"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 202
    expect(page.locator(".msg.user.other")).to_contain_text("vom Handy")
    expect(page.locator(".msg.nova")).to_have_count(1)
    expect(page.locator(".msg.nova .badge")).to_have_text("Antwort an ein anderes Gerät")

    # a turn that fails is shown as failed, with a retry that works
    scripted = served.app.state.context.model.text
    scripted.add("Antworte kurz und natürlich", "", fault="timeout", times=1)
    _write(page, "Bist du da?")
    failed = page.locator(".msg.user.failed")
    expect(failed).to_contain_text("keine Antwort: modell_timeout")
    failed.locator(".retry").click()
    expect(page.locator(".msg.nova")).to_have_count(2)

    # the connection drops; what happens meanwhile arrives after the reconnect
    page.evaluate("novaberg.socket.close()")
    expect(page.locator("#connection")).not_to_have_text("verbunden")
    response = httpx.post(
        f"{served.url}/chat",
        json={"character_id": "nova", "text": "während du weg warst", "client_id": "handy"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 202
    expect(page.locator("#connection")).to_have_text("verbunden")
    expect(page.locator(".msg.user.other")).to_have_count(2)
    expect(page.locator(".msg.nova")).to_have_count(3)


def test_page_without_local_token_asks_for_one(endpoints: Endpoints, tmp_path: Path) -> None:
    """Served on a non-loopback bind, the page carries no token and asks for one."""
    settings = load_settings(
        home=tmp_path,
        redis_url=endpoints.redis_url,
        database_url=endpoints.database_url,
        llm="scripted",
        embed_dim=384,
        pixie=False,
        host="0.0.0.0",
        port=_free_port(),
    )
    with ServerThread(settings, endpoints) as server:
        url = f"http://127.0.0.1:{settings.port}"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                tab = browser.new_page()
                tab.goto(url)
                expect(tab.locator("#login")).to_be_visible()
            finally:
                browser.close()
        assert server.app.state.chat.page_token is None
