"""The library-roots agent on its own, against the real PostgreSQL and Redis: a folder
approved already is said so without a question; a yes to a folder that meanwhile overlaps
another person's approves nothing and says why; a folder with more files than the limit is
refused with the limit named, before anything is asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from library_files import notes_folder
from novaberg.agents.base import AgentState
from novaberg.agents.library_roots.agent import LibraryRootsAgent
from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.memory.library import roots

AGENT = LibraryRootsAgent()


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    return settings.model_copy(update={"library_folders": str(tmp_path), "library_max_files": 3})


async def run(deps: GraphDeps, task: str, **parameter: Any) -> AgentState:
    return await AGENT.invoke(
        AgentState(
            task=task,
            context={"user_id": "anna", "character_id": "nova"},
            parameter=parameter,
            steps=[],
            status="laufend",
        ),
        deps,
    )


async def test_a_folder_approved_already_is_said_so_without_a_question(
    deps: GraphDeps, tmp_path: Path
) -> None:
    folder = notes_folder(tmp_path)
    await roots.approve(deps.pool, "anna", folder.resolve(), by_person=True)
    final = await run(deps, f"Du darfst {folder} lesen")
    assert (final["status"], final["result"]) == (
        "abgeschlossen",
        f"Den Ordner {folder.resolve()} darf ich schon lesen; nichts geändert.",
    )


async def test_a_yes_to_a_folder_now_overlapping_another_persons_approves_nothing(
    deps: GraphDeps, tmp_path: Path
) -> None:
    folder = notes_folder(tmp_path)
    asked = await run(deps, f"Du darfst {folder} lesen")
    assert asked["status"] == "rueckfrage"
    await roots.approve(deps.pool, "bert", folder.resolve(), by_person=True)
    answered = await run(
        deps,
        "ja",
        **asked["parameter"],
        resume=True,
        user_answer="ja",
        original_rueckfrage=asked["question"],
    )
    assert answered["status"] == "fehler"
    assert answered["error"] == (
        f"{folder} überschneidet sich mit dem Ordner einer anderen Person; den kann ich "
        "für dich nicht freigeben."
    )
    assert [s.root.user_id for s in await roots.statuses(deps.pool, None)] == ["bert"]


async def test_too_many_files_are_refused_with_the_limit_before_asking(
    deps: GraphDeps, tmp_path: Path
) -> None:
    folder = notes_folder(tmp_path)
    (folder / "vierte.md").write_text("# Noch eine\n")
    final = await run(deps, f"Du darfst {folder} lesen")
    assert final["status"] == "fehler" and not final.get("question")
    assert final["error"].startswith(f"In {folder} liegen mehr als 3 Dateien")
