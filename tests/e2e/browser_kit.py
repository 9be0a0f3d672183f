"""Shared parts of the browser tests: `novaberg serve` in a thread with the scripted model,
Debian's Chromium driven by Playwright, screenshots saved as artefacts and the axe-core
accessibility check (axe fetched by `make test` into .cache/, never at test time)."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright.sync_api import Browser, Page, expect, sync_playwright

from novaberg.api.app import create_app
from novaberg.config import Settings, load_settings
from novaberg.runtime.services import Endpoints

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
"""Where the browser tests leave their screenshots (gitignored)."""
AXE_REPORT = ROOT / "artifacts" / "axe-summary.json"
AXE_JS = ROOT / ".cache" / "axe-core" / "axe.min.js"

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

APPROVE = {"score": 0.05, "direktiven_score": 0.05, "begruendung": "passt"}
RULES: list[dict[str, Any]] = [
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
    # the move is good news: perceived as joy (the emotion panel draws it)
    {
        "match": "Madrid",
        "schema": "PerceptionResult",
        "output": {"emotional": {"emotion": "freude", "arousal": 0.8}},
    },
    # something worth remembering: a salient segment lands in the short-term memory
    {
        "match": "Madrid",
        "schema": "Segmentation",
        "output": {"segmente": [{"segment": "Ich ziehe nach Madrid.", "thema_kurz": "Umzug"}]},
    },
    {
        "match": "Madrid",
        "schema": "SalienceScore",
        "output": {"salienz": 0.95, "themen": ["Umzug"], "gedaechtnistyp": "kurz"},
    },
    # Nova takes a moment to answer, so a person can type while a turn runs.
    {
        "match": "Antworte kurz und natürlich",
        "output": "Schön, von **dir** zu hören!",
        "latency_ms": 2000,
    },
    # every other text call about the move (the short-term entry's condensed kern)
    {"match": "Madrid", "output": "Der Nutzer zieht nach Madrid."},
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerThread:
    """`novaberg serve` in a thread: API, page and consumers in one process."""

    def __init__(self, settings: Settings, endpoints: Endpoints) -> None:
        self.settings = settings
        self.endpoints = endpoints
        self.app = create_app(settings, endpoints=endpoints, consumers=True)
        config = uvicorn.Config(
            self.app, host=settings.host, port=settings.port, log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://{settings.host}:{settings.port}"

    @property
    def user(self) -> str:
        return self.settings.default_user

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


def serve_settings(tmp_path: Path, endpoints: Endpoints, **overrides: Any) -> Settings:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES), encoding="utf-8")
    values: dict[str, Any] = {
        "home": tmp_path,
        "redis_url": endpoints.redis_url,
        "database_url": endpoints.database_url,
        "llm": "scripted",
        "script": rules,
        "embed_dim": 384,
        "pixie": False,
        "follow_ups": False,  # hash-derived perceptions would plan second messages at random
        "host": "127.0.0.1",
        "port": _free_port(),
        "default_user": f"gast{time.time_ns() % 10**9}",
    }
    return load_settings(**{**values, **overrides})


@pytest.fixture
def served(tmp_path: Path, endpoints: Endpoints) -> Iterator[ServerThread]:
    with ServerThread(serve_settings(tmp_path, endpoints), endpoints) as server:
        yield server


@pytest.fixture
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def open_page(browser: Browser, url: str, **context: Any) -> Page:
    """A new tab (in a new browser context unless `context` is an existing one) on the page,
    connected. German unless `context` names another locale: the page follows the browser's
    language (web/i18n.js), and most tests read its German words."""
    context.setdefault("locale", "de-DE")
    tab = browser.new_context(**context).new_page()
    tab.set_default_timeout(WAIT_MS)
    expect.set_options(timeout=WAIT_MS)  # expectations wait as long as actions
    tab.goto(url)
    expect(tab.locator("#connection")).to_have_class(re.compile(r"\bonline\b"))
    return tab


@pytest.fixture
def page(browser: Browser, served: ServerThread) -> Page:
    return open_page(browser, served.url)


@pytest.fixture
def shoot(request: pytest.FixtureRequest) -> Callable[[Page, str], Path]:
    """Save a full-page screenshot as an artefact; returns its path."""

    def take(tab: Page, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{request.node.name}-{name}.png"
        tab.screenshot(path=str(path), full_page=True)
        return path

    return take


def run_axe(tab: Page, label: str) -> dict[str, Any]:
    """axe-core on the page as it is; the summary is merged into artifacts/axe-summary.json.
    Returns {impact: [rule ids]} of every violation."""
    assert AXE_JS.exists(), f"{AXE_JS} missing: `make test` fetches the pinned axe-core"
    # evaluated, not added as a <script>: the page's CSP refuses inline scripts
    tab.evaluate(AXE_JS.read_text(encoding="utf-8"))
    result = tab.evaluate("async () => await axe.run(document)")
    found: dict[str, list[str]] = {}
    details = []
    for violation in result["violations"]:
        impact = violation.get("impact") or "unknown"
        found.setdefault(impact, []).append(violation["id"])
        details.append(
            {
                "id": violation["id"],
                "impact": impact,
                "nodes": [n["target"] for n in violation["nodes"]][:5],
            }
        )
    summary = json.loads(AXE_REPORT.read_text()) if AXE_REPORT.exists() else {}
    summary[label] = {
        "axe": result["testEngine"]["version"],
        "passes": len(result["passes"]),
        "violations": details,
        "incomplete": len(result["incomplete"]),
    }
    AXE_REPORT.parent.mkdir(parents=True, exist_ok=True)
    AXE_REPORT.write_text(json.dumps(summary, indent=2, ensure_ascii=False))
    return found
