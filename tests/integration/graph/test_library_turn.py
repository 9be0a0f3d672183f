"""The library in a turn (issue 34's done-when): an approved folder with a Markdown file, a
PDF and a DOCX; a question only the PDF answers reaches the composer as `[AUFZEICHNUNGEN]`
with that file and page, through a real CharacterGraph turn (scripted model, real Redis and
PostgreSQL). A plain message of a person without a library gets no block; a failing library
is named in the enricher's pipeline_log row and leaves the list explicitly empty."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from graph_helpers import script_human
from test_character_graph import script_character, user_turn

from library_files import PDF_FACT, notes_folder
from novaberg.agents.base import AgentState
from novaberg.agents.research.search import search_node
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.library import notes
from novaberg.memory.library.indexer import LibraryLimits, index_root
from novaberg.memory.library.roots import approve, checked_folder, revoke
from novaberg.store.pipeline_log import read_turn

LIMITS = LibraryLimits(1024 * 1024, 100, 10_000)
QUESTION = "Wie lang ist die Kuendigungsfrist meiner Wohnung?"
COMPOSER = "[AUFGABE]\nDu bereitest den Inhalt"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return notes_folder(tmp_path)


def composer_prompts(scripted: ScriptedLLM, text: str) -> list[str]:
    return [
        c["prompt"]
        for c in scripted.calls
        if c["schema"] is None and COMPOSER in c["prompt"] and text in c["prompt"]
    ]


async def enricher_row(deps: GraphDeps, turn_id: str) -> dict[str, Any]:
    await deps.log.flush()  # type: ignore[union-attr]
    rows = [r for r in await read_turn(deps.pool, turn_id) if r["node"] == "enricher"]
    assert rows, "the enricher wrote its row"
    content = rows[-1]["inhalt"]
    return content if isinstance(content, dict) else json.loads(content)


async def test_a_question_only_the_pdf_answers_reaches_the_composer_with_file_and_page(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM, folder: Path
) -> None:
    root = await approve(deps.pool, "meister", checked_folder(folder, LIMITS))
    report = await index_root(deps.pool, deps.model, root, LIMITS)
    assert (report.indexed, report.failed) == (3, [])
    script_human(scripted)
    script_character(scripted)

    _, final, payload = await user_turn(runtime, QUESTION)

    (prompt,) = composer_prompts(scripted, QUESTION)
    block = prompt.split("[AUFZEICHNUNGEN]\n", 1)[1].split("\n\n[", 1)[0]
    print(block)
    assert "(vertrag.pdf, S. 2, Z. 1–2)" in block and PDF_FACT in block
    assert "zitieren" in block, "the composer is told to quote it"
    assert "garten.md" not in block and "rezept.docx" not in block, "only what bears on it"
    (note,) = final["library_notes"]
    assert (note["file"], note["page"]) == (str(folder.resolve() / "vertrag.pdf"), 2)
    assert (await enricher_row(deps, payload["turn_id"]))["aufzeichnungen"] == [
        "vertrag.pdf, S. 2, Z. 1–2"
    ]

    assert (
        await revoke(deps.pool, "meister", folder) > 0
    )  # the index is gone: the next turn finds nothing
    _, again, _ = await user_turn(runtime, QUESTION + " Weisst du das noch?")
    assert again["library_notes"] == []
    assert all("[AUFZEICHNUNGEN]" not in p for p in composer_prompts(scripted, "noch?"))


async def test_a_plain_message_gets_no_block(runtime: GraphRuntime, scripted: ScriptedLLM) -> None:
    script_human(scripted)
    script_character(scripted)
    _, final, _ = await user_turn(runtime, "Wie geht's dir?")
    (prompt,) = composer_prompts(scripted, "Wie geht's dir?")
    assert "[AUFZEICHNUNGEN]" not in prompt and "Dateien von Person A" not in prompt
    assert final["library_notes"] == []


async def test_a_failing_library_is_named_and_its_list_set_empty(
    runtime: GraphRuntime,
    deps: GraphDeps,
    scripted: ScriptedLLM,
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = await approve(deps.pool, "meister", checked_folder(folder, LIMITS))
    await index_root(deps.pool, deps.model, root, LIMITS)

    async def unreachable(*_args: Any, **_kwargs: Any) -> Any:
        raise psycopg.OperationalError("the library's connection broke")

    monkeypatch.setattr(notes, "search_library", unreachable)
    script_human(scripted)
    script_character(scripted)
    _, final, payload = await user_turn(runtime, QUESTION)

    assert final["library_notes"] == [], "set explicitly, not left out"
    assert final["response"], "the turn went on"
    row = await enricher_row(deps, payload["turn_id"])
    assert row["aufzeichnungen_ausfall"] == "OperationalError: the library's connection broke"
    assert all("[AUFZEICHNUNGEN]" not in p for p in composer_prompts(scripted, QUESTION))


async def test_the_thinkers_memory_search_cites_the_file_and_page(
    deps: GraphDeps, folder: Path
) -> None:
    from novaberg.graph.thinker_tools import ThinkerTools

    root = await approve(deps.pool, "meister", checked_folder(folder, LIMITS))
    await index_root(deps.pool, deps.model, root, LIMITS)
    tools = ThinkerTools({"user_id": "meister", "character_id": "nova"}, deps)
    observation, cached = await tools.call("memory_search", "Kuendigungsfrist Wohnung")
    print(observation)
    assert not cached
    assert observation.splitlines()[0] == f"- (vertrag.pdf, S. 2, Z. 1–2) Paragraph 9 {PDF_FACT}"


async def test_the_research_agent_names_the_file_of_a_library_passage(
    deps: GraphDeps, folder: Path
) -> None:
    root = await approve(deps.pool, "meister", checked_folder(folder, LIMITS))
    assert (await index_root(deps.pool, deps.model, root, LIMITS)).indexed == 3
    state = AgentState(
        parameter={"frage": QUESTION, "bezug_turn_id": ""},
        context={"user_id": "meister", "character_id": deps.settings.character},
    )
    found = (await search_node(state, deps))["parameter"]["erinnerungen"]
    print("erinnerungen:", found)
    assert f"(vertrag.pdf, S. 2, Z. 1–2) Paragraph 9 {PDF_FACT}" in found
