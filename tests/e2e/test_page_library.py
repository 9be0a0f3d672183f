"""The library in the chat page, headless Chromium against the real app (scripted model,
real Redis and PostgreSQL): a person approves a temporary folder in the settings, sees the
progress line end with the counts, finds a PDF-only fact with the memory panel's search,
opens the passage with its neighbour, and revokes the folder after confirming. A refused
folder shows the server's one-line reason. axe-core stays without serious violations;
screenshots land in artifacts/screenshots/."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from browser_kit import ServerThread, open_page, run_axe, serve_settings
from playwright.sync_api import Browser, Page, expect

from library_files import PDF_FACT, make_docx, make_pdf
from novaberg.runtime.services import Endpoints
from novaberg.store.library_progress import (
    PROGRESS_DONE,
    PROGRESS_RUNNING,
    Progress,
    write_progress,
)
from novaberg.store.redis_client import create_redis

pytestmark = pytest.mark.browser

Shoot = Callable[[Page, str], Path]


@pytest.fixture
def offered(tmp_path: Path) -> Path:
    """NOVABERG_LIBRARY_FOLDERS of the page's server, with the person's notes in it."""
    root = tmp_path / "offen"
    notes = root / "Notizen"
    notes.mkdir(parents=True)
    (notes / "garten.md").write_text("# Garten\n\nDie Tomaten kommen im Mai ins Beet.\n")
    (notes / "vertrag.pdf").write_bytes(
        make_pdf(["Mietvertrag fuer die Wohnung in der Lindenstrasse.", "Paragraph 9\n" + PDF_FACT])
    )
    (notes / "rezept.docx").write_bytes(
        make_docx("Apfelkuchen", ["Sechs Aepfel schaelen.", "Eine Stunde backen."])
    )
    return root


@pytest.fixture
def library_server(tmp_path: Path, endpoints: Endpoints, offered: Path) -> Iterator[ServerThread]:
    home = tmp_path / "daten"  # beside the offered folder: the data directory is never offered
    home.mkdir()
    settings = serve_settings(tmp_path, endpoints, home=home, library_folders=str(offered))
    with ServerThread(settings, endpoints) as server:
        yield server


LENA = "Lena meint, die Kuendigungsfrist einer Wohnung sei meist drei Monate."


def group_chat() -> bytes:
    """A SillyTavern group chat in which Lena speaks about the notice period."""
    lines: list[dict[str, object]] = [
        {"user_name": "Sam", "character_name": "Nova", "create_date": "2026-02-01T18:00:00Z"},
        {"name": "Sam", "is_user": True, "send_date": "2026-02-01T18:01:00Z", "mes": "Hallo!"},
        {"name": "Lena", "is_user": False, "send_date": "2026-02-01T18:02:00Z", "mes": LENA},
    ]
    return "\n".join(json.dumps(line) for line in lines).encode()


def report_progress(server: ServerThread, root_id: int, progress: Progress) -> None:
    """What another API process's pass writes (run in a thread: the page test has no loop)."""

    async def write() -> None:
        redis = create_redis(server.endpoints.redis_url)
        try:
            await write_progress(redis, root_id, progress)
        finally:
            await redis.aclose()

    thread = threading.Thread(target=lambda: asyncio.run(write()))
    thread.start()
    thread.join(30)


def _panel(tab: Page, label: str) -> None:
    tab.get_by_role("button", name=label, exact=True).click()


def test_a_folder_is_approved_searched_opened_and_revoked(
    browser: Browser, library_server: ServerThread, offered: Path, shoot: Shoot
) -> None:
    notes = offered / "Notizen"
    page = open_page(browser, library_server.url)
    _panel(page, "Einstellungen")
    library = page.get_by_test_id("library")
    expect(library.get_by_test_id("library-roots")).to_have_text("Noch kein Ordner freigegeben.")

    # a folder the operator did not offer: refused with the server's reason, nothing listed
    library.get_by_test_id("library-path").fill("/etc")
    library.get_by_test_id("library-approve").click()
    error = library.get_by_test_id("library-error")
    expect(error).to_have_text(
        "nicht freigegeben: /etc liegt nicht in einem der Ordner, die dieser Server zum Lesen anbietet."
    )
    expect(library.get_by_test_id("library-path")).to_have_attribute("aria-invalid", "true")

    # record every progress line the page shows from here on
    page.evaluate(
        """() => {
          const el = document.querySelector('[data-testid=library-progress]');
          window.progressLines = [];
          new MutationObserver(() => window.progressLines.push(el.textContent))
            .observe(el, {childList: true, characterData: true, subtree: true});
        }"""
    )
    library.get_by_test_id("library-path").fill(str(notes))
    library.get_by_test_id("library-approve").click()
    progress = library.get_by_test_id("library-progress")
    expect(progress).to_have_text(f"{notes}: fertig – 3 Dateien · 4 Abschnitte")
    expect(error).to_be_hidden()
    lines = page.evaluate("() => window.progressLines")
    print("progress lines seen:", lines)
    running = re.compile(
        rf"Indiziere {re.escape(str(notes))}: (\d von 3 Dateien|Dateien werden gezählt …)"
    )
    assert all(running.fullmatch(line) or "fertig" in line for line in lines if line), lines
    row = library.locator("li[data-root]")
    expect(row).to_have_count(1)
    root_id = int(row.get_attribute("data-root") or 0)
    expect(row.locator("[data-role=library-counts]")).to_have_text("3 Dateien · 4 Abschnitte")

    # a pass that runs long (reported by another process): the line counts, the page polls
    report_progress(library_server, root_id, Progress(PROGRESS_RUNNING, 12, 40))
    _panel(page, "Gefühle")
    _panel(page, "Einstellungen")
    expect(progress).to_have_text(f"Indiziere {notes}: 12 von 40 Dateien")
    expect(progress).to_have_attribute("data-running", "true")
    shoot(page, "library-indexing")
    report_progress(library_server, root_id, Progress(PROGRESS_DONE, 40, 40))
    expect(progress).to_have_text(f"{notes}: fertig – 3 Dateien · 4 Abschnitte")
    expect(progress).to_have_attribute("data-running", "false")
    serious = {"settings": _serious(run_axe(page, "library-settings"))}
    shoot(page, "library-settings")

    # an imported group chat: its turns' hits name who said them
    imported = page.request.post(
        f"{library_server.url}/import/chat?character=nova",
        data=group_chat(),
        headers={
            "Authorization": f"Bearer {page.evaluate('() => window.novaberg.token')}",
            "Content-Type": "application/octet-stream",
        },
    )
    assert imported.ok, imported.text()

    # the memory panel's search finds the PDF's passage, labelled; a click opens it
    _panel(page, "Gedächtnis")
    memory = page.get_by_test_id("panel-memory")
    memory.locator("#memory-search").fill("Kuendigungsfrist Wohnung")
    memory.get_by_role("button", name="Im Gedächtnis suchen").click()
    hit = memory.get_by_test_id("library-hit").first
    expect(hit.get_by_role("button")).to_have_text("vertrag.pdf, S. 2, Z. 1–2")
    hit.get_by_role("button").click()
    passage = memory.get_by_test_id("library-passage")
    expect(passage).to_be_visible()
    expect(passage.locator("h4")).to_have_text(f"vertrag.pdf, S. 2, Z. 1–2 — {notes}/vertrag.pdf")
    expect(passage.get_by_test_id("passage-chosen")).to_have_text(f"Paragraph 9\n{PDF_FACT}")
    expect(passage.locator(".around")).to_have_text(
        ["Mietvertrag fuer die Wohnung in der Lindenstrasse."]
    )
    said = memory.get_by_test_id("memory-hits").locator("li", has_text=LENA)
    expect(said.locator("small")).to_have_text(re.compile(r"archiv · Lena · "))
    serious["passage"] = _serious(run_axe(page, "library-passage"))
    shoot(page, "library-passage")

    # revoking asks first; "Abbrechen" keeps the folder, "Ja, widerrufen" deletes its index
    _panel(page, "Einstellungen")
    row.get_by_test_id("library-revoke").click()
    row.get_by_role("button", name="Abbrechen").click()
    expect(row).to_have_count(1)
    row.get_by_test_id("library-revoke").click()
    row.get_by_test_id("library-revoke-confirm").click()
    expect(library.get_by_test_id("library-status")).to_have_text(
        f"{notes}: widerrufen, 4 Abschnitte gelöscht"
    )
    expect(library.get_by_test_id("library-roots")).to_have_text("Noch kein Ordner freigegeben.")
    _panel(page, "Gedächtnis")
    memory.get_by_role("button", name="Im Gedächtnis suchen").click()
    expect(memory.get_by_test_id("library-hit")).to_have_count(0)
    shoot(page, "library-revoked")
    assert not any(serious.values()), serious


def _serious(found: dict[str, list[str]]) -> dict[str, list[str]]:
    return {k: v for k, v in found.items() if k in ("serious", "critical")}


def test_a_folder_approved_in_chat_links_its_receipt_to_the_library_settings(
    browser: Browser, library_server: ServerThread, offered: Path
) -> None:
    """The chat way (the scripted model words the answers): Nova asks back with Ja/Nein, "Ja" approves, and the receipt under her
    answer opens the settings at the library, where the folder is listed."""
    tab = open_page(browser, library_server.url)
    notes = offered / "Notizen"
    tab.fill("#input", f"Du darfst meinen Ordner {notes} lesen")
    tab.press("#input", "Enter")
    question = tab.locator(".msg.nova.asks")
    expect(question).to_have_count(1)
    question.get_by_role("group", name="Antwort auf die Rückfrage").get_by_role(
        "button", name="Ja"
    ).click()

    receipt = tab.locator(".msg.nova").last.get_by_test_id("receipts").get_by_role("link")
    expect(receipt).to_have_text([f"✓ Bibliothek: + {notes}"])
    receipt.click()
    expect(tab.get_by_test_id("panel-settings")).to_be_visible()
    expect(tab.locator("#h-library")).to_be_focused()
    expect(tab.get_by_test_id("library-roots")).to_contain_text(str(notes))
