"""The library against the real PostgreSQL: a folder with a Markdown file, a PDF and a Word
file (made here) is approved and indexed; a fact only the PDF holds is found with its file,
page and lines; a changed or deleted file is handled on the next pass; a pass that failed
midway resumes without reading the done files again; revoking empties the index; and a
folder nobody approved is never opened (an audit hook records every open and listing)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool
from typer.testing import CliRunner, Result

from library_files import PDF_FACT, forbid, forget, make_docx, make_pdf, touched
from novaberg.cli import app
from novaberg.config import Settings
from novaberg.llm.errors import ModelUnavailable
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder, ScriptedLLM
from novaberg.memory.library.indexer import LibraryLimits, index_root
from novaberg.memory.library.roots import (
    PersonPolicy,
    RootRefused,
    approve,
    checked_folder,
    revoke,
)
from novaberg.memory.library.search import search_library
from novaberg.runtime.services import Endpoints
from novaberg.store import library

USER = "meister"
LIMITS = LibraryLimits(1024 * 1024, 100, 10_000)


@pytest.fixture
def forbidden() -> Iterator[Callable[[Path], None]]:
    yield forbid
    forget()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    notes = tmp_path / "Notizen"
    notes.mkdir()
    (notes / "garten.md").write_text(
        "# Garten\n\nDie Tomaten kommen im Mai ins Beet.\n\n## Kompost\n\nEinmal im Herbst umsetzen.\n"
    )
    (notes / "vertrag.pdf").write_bytes(
        make_pdf(["Mietvertrag fuer die Wohnung in der Lindenstrasse.", "Paragraph 9\n" + PDF_FACT])
    )
    (notes / "rezept.docx").write_bytes(
        make_docx("Apfelkuchen", ["Sechs Aepfel schaelen.", "Eine Stunde backen."])
    )
    return notes


async def passages(db: AsyncConnectionPool) -> int:
    async with db.connection() as conn:
        row = await (await conn.execute("SELECT count(*) AS n FROM dateien_abschnitte")).fetchone()
        assert row is not None
        return int(row["n"])


async def test_a_pdf_only_fact_is_found_with_its_file_and_page(
    db: AsyncConnectionPool, model: ModelLayer, folder: Path, forbidden: Any
) -> None:
    secret = folder.parent / "Geheim"
    secret.mkdir()
    (secret / "tagebuch.md").write_text("Die Kuendigungsfrist ist geheim.")
    (folder / "link.md").symlink_to(secret / "tagebuch.md")
    (folder / "linkdir").symlink_to(secret, target_is_directory=True)
    os.mkfifo(folder / "pipe.md")  # a read would wait forever: the test would time out
    forbidden(secret)

    root = await approve(db, USER, checked_folder(folder, LIMITS))
    report = await index_root(db, model, root, LIMITS)
    assert (report.indexed, report.failed, report.skipped) == (3, [], [])

    hits = await search_library(db, model, USER, "Kuendigungsfrist Wohnung")
    top = hits[0].as_json(1)
    print(json.dumps(top, ensure_ascii=False))
    assert top["layer"] == "library"
    (source,) = top["sources"]
    assert source["file"] == str(folder.resolve() / "vertrag.pdf")
    assert source["page"] == 2
    assert source["lines"] == [1, 2]
    assert PDF_FACT in top["text"]
    assert hits[0].source.label() == "vertrag.pdf, S. 2, Z. 1–2"
    assert touched() == [], "a folder nobody approved was opened"

    docx_hit = (await search_library(db, model, USER, "Apfelkuchen backen"))[0]
    assert (docx_hit.source.heading, docx_hit.source.file.endswith("rezept.docx")) == (
        "Apfelkuchen",
        True,
    )
    other = await search_library(db, model, "someone-else", "Kuendigungsfrist Wohnung")
    assert other == [], "one person's library is not another's"


async def test_changed_and_deleted_files_are_handled_on_the_next_pass(
    db: AsyncConnectionPool, model: ModelLayer, folder: Path
) -> None:
    root = await approve(db, USER, checked_folder(folder, LIMITS))
    await index_root(db, model, root, LIMITS)

    again = await index_root(db, model, root, LIMITS)
    assert (again.indexed, again.unchanged) == (0, 3), "an unchanged file is not read again"

    (folder / "garten.md").write_text("# Garten\n\nDie Kartoffeln kommen im April in die Erde.\n")
    os.utime(folder / "garten.md", (1_000_000_000, 1_000_000_000))
    (folder / "rezept.docx").unlink()
    report = await index_root(db, model, root, LIMITS)
    assert (report.indexed, report.removed, report.unchanged) == (1, 1, 1)
    assert await search_library(db, model, USER, "Tomaten") == []
    assert await search_library(db, model, USER, "Apfelkuchen") == []
    (hit,) = await search_library(db, model, USER, "Kartoffeln", limit=1)
    assert (hit.source.heading, hit.source.line_from) == ("Garten", 3)

    touched = folder / "vertrag.pdf"
    os.utime(touched, (2_000_000_000, 2_000_000_000))  # new mtime, same bytes
    report = await index_root(db, model, root, LIMITS)
    assert (report.indexed, report.unchanged) == (0, 2)
    async with db.connection() as conn:
        assert (await library.files(conn, root.id))["vertrag.pdf"].mtime == 2_000_000_000


class FailingEmbedder(ScriptedEmbedder):
    """Fails for any batch containing `word` (the model went away mid-pass)."""

    def __init__(self, word: str) -> None:
        super().__init__(384)
        self.word = word
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if any(self.word in text for text in texts):
            raise ModelUnavailable("embedding server gone")
        self.texts.extend(texts)
        return await super().embed(texts)


async def test_a_pass_that_failed_midway_resumes_with_the_missing_file(
    db: AsyncConnectionPool, folder: Path
) -> None:
    (folder / "kaputt.pdf").write_bytes(b"%PDF-1.4 nothing here")
    root = await approve(db, USER, checked_folder(folder, LIMITS))
    first = await index_root(
        db, ModelLayer(ScriptedLLM(), FailingEmbedder("Apfelkuchen")), root, LIMITS
    )
    assert first.not_embedded == ["rezept.docx"]
    assert first.indexed == 2
    assert [path for path, _ in first.failed] == ["kaputt.pdf"], "a broken file is listed"
    assert "not a readable PDF" in first.failed[0][1]

    embedder = FailingEmbedder("nothing fails now")
    second = await index_root(db, ModelLayer(ScriptedLLM(), embedder), root, LIMITS)
    assert (second.indexed, second.unchanged) == (1, 3)
    assert all("Apfelkuchen" in text for text in embedder.texts), "only the missing file"


async def test_limits_skip_with_the_setting_named(
    db: AsyncConnectionPool, model: ModelLayer, folder: Path
) -> None:
    (folder / "gross.txt").write_text("x" * 5000)
    root = await approve(db, USER, checked_folder(folder, LIMITS))
    report = await index_root(db, model, root, LibraryLimits(4000, 100, 3))
    skipped = dict(report.skipped)
    assert "NOVABERG_LIBRARY_MAX_FILE_BYTES" in skipped["gross.txt"]
    assert any("NOVABERG_LIBRARY_MAX_CHUNKS" in reason for reason in skipped.values())
    assert await passages(db) <= 3
    with pytest.raises(RootRefused, match="NOVABERG_LIBRARY_MAX_FILES"):
        checked_folder(folder, LibraryLimits(4000, 2, 3))


async def test_revoking_empties_the_index(
    db: AsyncConnectionPool, model: ModelLayer, folder: Path
) -> None:
    root = await approve(db, USER, checked_folder(folder, LIMITS))
    await index_root(db, model, root, LIMITS)
    assert await passages(db) > 0
    assert await revoke(db, USER, folder) > 0
    assert await passages(db) == 0
    assert await search_library(db, model, USER, "Kuendigungsfrist") == []
    with pytest.raises(RootRefused, match="not an approved folder"):
        await revoke(db, USER, folder)


async def test_overlapping_folders_are_refused(db: AsyncConnectionPool, folder: Path) -> None:
    (folder / "Unter").mkdir()
    await approve(db, USER, checked_folder(folder, LIMITS))
    for nested in (folder / "Unter", folder.parent):
        with pytest.raises(RootRefused, match="overlaps the approved folder"):
            await approve(db, USER, checked_folder(nested, LIMITS))
    await approve(db, USER, checked_folder(folder, LIMITS))  # the same folder again: renewed
    await approve(db, "someone-else", checked_folder(folder / "Unter", LIMITS))


async def test_a_person_approves_only_below_the_offered_folders(
    db: AsyncConnectionPool, folder: Path, tmp_path: Path
) -> None:
    offered = Settings(library_folders=str(folder.parent), home=tmp_path / "data")
    (tmp_path / "data").mkdir()
    policy = PersonPolicy.of(offered)
    policy.check(checked_folder(folder, LIMITS))
    for refused, why in (
        (tmp_path / "data", "data directory"),
        (tmp_path, "data directory"),
        (Path("/etc"), "only folders below"),
    ):
        with pytest.raises(RootRefused, match=why):
            policy.check(checked_folder(refused, LIMITS))
    with pytest.raises(RootRefused, match="approved by the operator"):
        PersonPolicy.of(Settings(library_folders="", home=tmp_path / "data")).check(folder)

    (folder / "Unter").mkdir()
    await approve(db, "someone-else", checked_folder(folder / "Unter", LIMITS))
    with pytest.raises(RootRefused, match="another person's"):
        await approve(db, USER, checked_folder(folder, LIMITS), by_person=True)
    await approve(db, USER, checked_folder(folder, LIMITS))  # the operator may


# --- the command ---------------------------------------------------------------------------


@pytest.fixture
def cli_env(endpoints: Endpoints, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, value in {
        "NOVABERG_HOME": str(tmp_path / "home"),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
    }.items():
        monkeypatch.setenv(name, value)
    return tmp_path


async def cli(*args: str) -> Result:
    """Run the CLI in a thread (it runs its own event loop)."""
    return await asyncio.to_thread(CliRunner().invoke, app, list(args))


async def test_the_library_command(db: AsyncConnectionPool, cli_env: Path, folder: Path) -> None:
    added = await cli("library", "add", str(folder), "--user", USER)
    assert added.exit_code == 0, added.output
    assert "3 file(s) indexed" in added.stdout

    found = await cli("library", "search", "--json", "--user", USER, "Kuendigungsfrist Wohnung")
    assert found.exit_code == 0, found.output
    top = json.loads(found.stdout.splitlines()[0])
    print(json.dumps(top, ensure_ascii=False))
    assert top["layer"] == "library"
    assert (Path(top["sources"][0]["file"]).name, top["sources"][0]["page"]) == (
        "vertrag.pdf",
        2,
    )

    listed = await cli("library", "list", "--json", "--user", USER)
    row = json.loads(listed.stdout)
    assert (row["pfad"], row["dateien"]) == (str(folder.resolve()), 3)

    (folder / "garten.md").unlink()
    again = await cli("library", "reindex", "--json", "--user", USER)
    assert json.loads(again.stdout)["entfernt"] == 1

    removed = await cli("library", "remove", str(folder), "--user", USER)
    assert removed.exit_code == 0, removed.output
    assert await passages(db) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "{tmp}/missing"], "no such folder"),
        (["add", "{tmp}/Notizen/garten.md"], "not a directory"),
        (["remove", "{tmp}/Notizen"], "not an approved folder"),
        (["reindex", "{tmp}/Notizen"], "not an approved folder"),
        (["add", "/proc/self"], "a system folder"),
    ],
)
async def test_bad_input_ends_with_one_line_and_exit_2(
    db: AsyncConnectionPool, cli_env: Path, folder: Path, args: list[str], message: str
) -> None:
    result = await cli("library", *[a.format(tmp=folder.parent) for a in args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# --- watcher and job -----------------------------------------------------------------------

WAIT = 20.0
"""Seconds the watcher may take to notice a change (a guard; a pass takes milliseconds)."""


async def _until(check: Any, nudge: Any) -> None:
    """Wait for `check`; `nudge` writes the change again each round, so a change made
    before the watcher had registered its watches is seen (the pass it triggers covers the
    whole folder, deletions included)."""
    deadline = asyncio.get_running_loop().time() + WAIT
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "the watcher did not catch up"
        await asyncio.sleep(0.5)
        nudge()


async def test_the_watcher_indexes_new_and_forgets_deleted_files(
    db: AsyncConnectionPool, redis: Any, model: ModelLayer, folder: Path
) -> None:
    from novaberg.memory.library.watcher import watch

    root = await approve(db, USER, checked_folder(folder, LIMITS))
    await index_root(db, model, root, LIMITS)
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch(db, redis, model, LIMITS, stop, recheck=0.5))
    try:

        def write() -> None:
            (folder / "neu.md").write_text(
                "# Werkstatt\n\nDer Drehmomentschluessel liegt im Keller.\n"
            )

        write()
        (folder / "rezept.docx").unlink()

        async def caught_up() -> bool:
            found = await search_library(db, model, USER, "Drehmomentschluessel")
            gone = await search_library(db, model, USER, "Apfelkuchen")
            return bool(found) and not gone

        await _until(caught_up, write)
        (hit,) = await search_library(db, model, USER, "Drehmomentschluessel", limit=1)
        assert (hit.source.heading, hit.source.line_from) == ("Werkstatt", 3)

        other = folder.parent / "Neu"
        other.mkdir()
        (other / "a.md").write_text("Die Giesskanne steht am Schuppen.")
        root2 = await approve(db, USER, checked_folder(other, LIMITS))

        def write_other() -> None:
            (other / "b.md").write_text("Der Rasenmaeher braucht Benzin.")

        write_other()  # seen once the watcher has re-read the roots (every 0.5 s here)

        async def new_root_watched() -> bool:
            return bool(await search_library(db, model, USER, "Rasenmaeher"))

        await _until(new_root_watched, write_other)
        assert root2.id != root.id
    finally:
        stop.set()
        await asyncio.wait_for(watcher, WAIT)


async def test_the_job_passes_every_root_and_skips_a_root_in_progress(
    db: AsyncConnectionPool, redis: Any, model: ModelLayer, folder: Path
) -> None:
    from novaberg.memory.library.watcher import pass_all
    from novaberg.store import keys

    root = await approve(db, USER, checked_folder(folder, LIMITS))
    await redis.set(keys.library_pass(root.id), "someone-else", px=60_000)
    assert (await pass_all(db, redis, model, LIMITS))["belegt"] == 1
    assert await passages(db) == 0, "a root another pass holds is left to it"
    await redis.delete(keys.library_pass(root.id))
    totals = await pass_all(db, redis, model, LIMITS)
    assert (totals["wurzeln"], totals["indiziert"]) == (1, 3)
    assert await redis.exists(keys.library_pass(root.id)) == 0, "the lease is released"


async def test_a_large_library_is_searched_through_the_index_with_the_same_hit(
    db: AsyncConnectionPool, model: ModelLayer, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = await approve(db, USER, checked_folder(folder, LIMITS))
    await index_root(db, model, root, LIMITS)
    exact = await search_library(db, model, USER, "Kuendigungsfrist Wohnung")
    monkeypatch.setattr(library, "EXACT_LIMIT", 0)  # every library counts as large
    through_index = await search_library(db, model, USER, "Kuendigungsfrist Wohnung")
    assert [h.id for h in through_index][:1] == [h.id for h in exact][:1]
    assert through_index[0].source.page == 2


async def test_a_folder_over_the_file_limit_is_refused_by_the_command(
    db: AsyncConnectionPool, cli_env: Path, folder: Path
) -> None:
    result = await asyncio.to_thread(
        CliRunner().invoke,
        app,
        ["library", "add", str(folder)],
        env={"NOVABERG_LIBRARY_MAX_FILES": "2"},
    )
    assert result.exit_code == 2, result.output
    assert "NOVABERG_LIBRARY_MAX_FILES (2)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert await passages(db) == 0


async def test_a_worker_with_pixie_keeps_the_library_current(
    db: AsyncConnectionPool, redis: Any, model: ModelLayer, settings: Any, folder: Path
) -> None:
    """The worker starts the watcher beside Pixie: a file written while it runs is found,
    and the worker stops cleanly with it."""
    from novaberg.events.worker import Worker
    from novaberg.graph.contract import GraphDeps
    from novaberg.graph.runner import GraphRuntime
    from novaberg.llm.gate import ModelGate

    await approve(db, USER, checked_folder(folder, LIMITS))
    deps = GraphDeps(settings.model_copy(update={"pixie": True}), redis, db, model)
    worker = Worker(redis, GraphRuntime(deps), ModelGate(redis, "bibliothek-test", 2))
    await worker.start()
    try:
        assert "library-watch" in {task.get_name() for task in worker._tasks}

        def write() -> None:
            (folder / "werkstatt.md").write_text("Die Standbohrmaschine steht links.\n")

        write()

        async def found() -> bool:
            return bool(await search_library(db, model, USER, "Standbohrmaschine"))

        await _until(found, write)
    finally:
        await asyncio.wait_for(worker.stop(), WAIT)
