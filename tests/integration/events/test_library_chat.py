"""The library through the real app, queues, consumers, graphs and WebSocket (scripted model
only): a person's approved folder holds a Markdown file, a PDF and a DOCX; she asks what only
the PDF says, the composer gets `[AUFZEICHNUNGEN]` with that file and page, and the answer
is delivered on her socket."""

from __future__ import annotations

from pathlib import Path

import httpx
from event_helpers import post, script_answer
from psycopg_pool import AsyncConnectionPool

from library_files import PDF_FACT, notes_folder
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.library.indexer import LibraryLimits, index_root
from novaberg.memory.library.roots import approve, checked_folder

LIMITS = LibraryLimits(1024 * 1024, 100, 10_000)
ANSWER = "In deinem Mietvertrag steht auf Seite 2: sieben Wochen zum Monatsende."


async def test_a_question_about_a_file_is_answered_from_the_library(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    db: AsyncConnectionPool,
    model: ModelLayer,
    tmp_path: Path,
) -> None:
    folder = notes_folder(tmp_path)
    root = await approve(db, "anna", checked_folder(folder, LIMITS))
    assert (await index_root(db, model, root, LIMITS)).indexed == 3
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, ANSWER)
    response = await post(http, anna, "Wie lang ist die Kuendigungsfrist meiner Wohnung?")
    assert response.status_code == 202, response.text
    await workers()
    answer = await ws.wait_typ("character_response")
    await ws.wait_for(lambda m: m.get("node") == "dispatcher" and m.get("graph") == "character")
    print("websocket:", [(m["typ"], m.get("graph"), m.get("node")) for m in ws.seen])
    assert answer["nachricht"] == ANSWER and not ws.of("turn_gescheitert")

    [prompt] = [c["prompt"] for c in scripted.calls if "Du bereitest den Inhalt" in c["prompt"]]
    block = prompt.split("[AUFZEICHNUNGEN]\n", 1)[1].split("\n\n", 1)[0]
    print("block:", block)
    assert f"- (vertrag.pdf, S. 2, Z. 1–2) „Paragraph 9 {PDF_FACT}“" in block.splitlines()
