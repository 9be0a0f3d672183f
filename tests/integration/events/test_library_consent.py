"""Approving a folder in chat, through the real app, queues, workers, graphs, agents and
WebSocket (scripted model only): "Du darfst meinen Ordner … lesen" → Nova asks back, naming
the folder and its files → "ja" → the folder is indexed in the background and a later
question gets `[AUFZEICHNUNGEN]` from it → "Lies … nicht mehr" empties the index. A "nein"
approves nothing; "ja?" and "vielleicht" ask again; a folder outside
NOVABERG_LIBRARY_FOLDERS is refused in plain words and never opened."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import CONVERSATION, RESPONDER, WAIT, post, script_answer
from psycopg_pool import AsyncConnectionPool

from library_files import PDF_FACT, forbid, forget, notes_folder, touched
from novaberg.agents.library_roots import NAME
from novaberg.agents.registry import discover_agents
from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import keys
from novaberg.wire import FIELD_AWAITING, FIELD_CHANGES, MSG_RESPONSE

ASKED = "Stelle dem Nutzer genau diese Frage, nichts anderes:\n"
DONE = f"Berichte in der Ich-Form, was du getan hast:\n- {NAME}: "
FAILED = f"- Agent '{NAME}': "
DECLINED = "Der Nutzer hat abgelehnt. Bestätige kurz"
QUESTION = "Wie lang ist die Kuendigungsfrist meiner Wohnung?"
YES_NO = {"typ": "awaiting_user", "agent": NAME, "art": "ja_nein"}


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    """Folders below `tmp_path/erlaubt` are the ones a person may approve herself."""
    return settings.model_copy(update={"library_folders": str(tmp_path / "erlaubt")})


@pytest.fixture
async def runtime(
    settings: Settings, redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> AsyncIterator[GraphRuntime]:
    """The real graphs with the real task agents."""
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model)
    yield GraphRuntime(deps, registry=discover_agents())
    assert deps.log is not None
    await deps.log.close()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "erlaubt").mkdir()
    return notes_folder(tmp_path / "erlaubt")


def nova_says(scripted: ScriptedLLM, task: str, answer: str) -> None:
    """The responder answers `answer` when its [AUFGABE] block holds `task` (the block, not
    the history: Nova's earlier words are in the history too)."""
    scripted.add(rf"^(?=.*{RESPONDER})(?=.*{re.escape(task)})", answer)


class Chat:
    """One person's chat: send a message, wait for the answer to exactly it."""

    def __init__(self, http: httpx.AsyncClient, token: str, ws: Any) -> None:
        self.http, self.token, self.ws = http, token, ws

    async def say(self, text: str) -> dict[str, Any]:
        response = await post(self.http, self.token, text)
        assert response.status_code == 202, response.text
        message_id = response.json()["nachrichten_id"]
        return await self.ws.wait_for(
            lambda m: m.get("typ") == MSG_RESPONSE and m["nachrichten_ids"] == [message_id]
        )

    def transcript(self) -> list[str]:
        return [
            f"{m['typ']}: {m.get('nachricht')!r} erwartet_antwort={m.get(FIELD_AWAITING)} "
            f"aenderungen={m.get(FIELD_CHANGES)}"
            for m in self.ws.of(MSG_RESPONSE)
        ]


@pytest.fixture
async def chat(http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM) -> Chat:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Gern.")
    scripted.add(".*", CONVERSATION, schema="RouterDecision")
    await workers()
    return Chat(http, anna, ws)


async def roots_of(db: AsyncConnectionPool) -> list[tuple[str, str]]:
    async with db.connection() as conn:
        cur = await conn.execute("SELECT pfad, zustand FROM dateien_wurzeln ORDER BY id")
        return [(row["pfad"], row["zustand"]) for row in await cur.fetchall()]


async def indexed(db: AsyncConnectionPool) -> tuple[int, int]:
    """(files indexed ok, passages) of everyone's library."""
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT (SELECT count(*) FROM dateien_index WHERE status = 'ok') AS files,"
            " (SELECT count(*) FROM dateien_abschnitte) AS passages"
        )
        row = await cur.fetchone()
        assert row is not None
        return int(row["files"]), int(row["passages"])


def router_calls(scripted: ScriptedLLM, text: str) -> list[dict[str, Any]]:
    return [c for c in scripted.calls if c["schema"] == "RouterDecision" and text in c["prompt"]]


async def test_a_folder_approved_in_chat_is_read_searched_and_forgotten(
    chat: Chat,
    scripted: ScriptedLLM,
    db: AsyncConnectionPool,
    redis: aioredis.Redis,
    http: httpx.AsyncClient,
    folder: Path,
) -> None:
    real = folder.resolve()
    question = f"Darf ich deinen Ordner {real} lesen? Darin liegen 3 Dateien, die ich lesen kann."
    nova_says(scripted, ASKED + question, question)
    nova_says(scripted, DONE + f"Ordner {real} freigegeben", "Gern, ich lese ihn jetzt ein.")
    nova_says(scripted, DONE + f"Ordner {real} nicht mehr freigegeben", "Erledigt, vergessen.")
    request = f"Du darfst meinen Ordner {folder} lesen"

    asked = await chat.say(request)
    assert asked["nachricht"] == question
    assert asked[FIELD_AWAITING] == YES_NO
    assert router_calls(scripted, request) == [], "a folder request needs no router round"
    assert await roots_of(db) == [], "nothing is approved before the yes"
    assert await redis.exists(keys.pending_agent("anna"))

    done = await chat.say("ja")
    assert done["nachricht"] == "Gern, ich lese ihn jetzt ein."
    assert done[FIELD_CHANGES] == [
        {"agent": NAME, "aktion": "freigeben", "text": f"Bibliothek: + {real}"}
    ]
    assert await roots_of(db) == [(str(real), "freigegeben")]

    deadline = asyncio.get_running_loop().time() + WAIT
    while (await indexed(db))[0] < 3:  # the pass runs beside the turns, not in them
        assert asyncio.get_running_loop().time() < deadline, "the folder was not indexed"
        await asyncio.sleep(0.1)

    scripted.add(re.escape(QUESTION), CONVERSATION, schema="RouterDecision")
    scripted.add("als eigenständige Suchanfrage", QUESTION)  # the query rewrite, verbatim
    await chat.say(QUESTION)
    [composer] = [c["prompt"] for c in scripted.calls if "Du bereitest den Inhalt" in c["prompt"]][
        -1:
    ]
    block = composer.split("[AUFZEICHNUNGEN]\n", 1)[1].split("\n\n", 1)[0]
    assert f"- (vertrag.pdf, S. 2, Z. 1–2) „Paragraph 9 {PDF_FACT}“" in block.splitlines()
    found = await http.get(
        "/memory/nova/search",
        params={"q": "Kuendigungsfrist"},
        headers={"Authorization": f"Bearer {chat.token}"},
    )
    assert "library" in [hit["layer"] for hit in found.json()["hits"]]

    _files, passages = await indexed(db)
    assert passages > 0
    revoked = await chat.say(f"Lies {folder} nicht mehr")
    assert revoked["nachricht"] == "Erledigt, vergessen."
    assert revoked[FIELD_CHANGES] == [
        {"agent": NAME, "aktion": "widerrufen", "text": f"Bibliothek: − {real}"}
    ]
    assert await indexed(db) == (0, 0)
    assert await roots_of(db) == [(str(real), "widerrufen")]
    [responder] = [
        c["prompt"] for c in scripted.calls if DONE + f"Ordner {real} nicht" in c["prompt"]
    ]
    told = responder.split(DONE, 1)[1].splitlines()[0]
    print("\nrevoked:", told)
    assert re.fullmatch(
        rf"Ordner {re.escape(str(real))} nicht mehr freigegeben; {passages} Abschnitte daraus vergessen\.",
        told,
    )
    first = next(i for i, m in enumerate(chat.ws.seen) if m.get("typ") == MSG_RESPONSE)
    print(
        "\nWebSocket, the ask-back turn:",
        [(m["typ"], m.get("node")) for m in chat.ws.seen[: first + 1]],
    )
    print("WebSocket, the answers in order:", *chat.transcript(), sep="\n  ")


async def test_nein_approves_nothing(
    chat: Chat, scripted: ScriptedLLM, db: AsyncConnectionPool, redis: aioredis.Redis, folder: Path
) -> None:
    nova_says(scripted, ASKED + "Darf ich deinen Ordner", "Darf ich?")
    nova_says(scripted, DECLINED, "Gut, ich lasse ihn in Ruhe.")
    assert (await chat.say(f"You may read my folder {folder}"))[FIELD_AWAITING] == YES_NO
    declined = await chat.say("nein")
    assert declined["nachricht"] == "Gut, ich lasse ihn in Ruhe."
    assert declined[FIELD_AWAITING] is None and declined[FIELD_CHANGES] == []
    assert await roots_of(db) == [] and await indexed(db) == (0, 0)
    assert not await redis.exists(keys.pending_agent("anna"))


async def test_an_unclear_answer_asks_again_and_approves_nothing(
    chat: Chat, scripted: ScriptedLLM, db: AsyncConnectionPool, redis: aioredis.Redis, folder: Path
) -> None:
    nova_says(scripted, ASKED + "Darf ich deinen Ordner", "Darf ich deinen Ordner lesen?")
    await chat.say(f"Du darfst meinen Ordner {folder} lesen")
    for unclear in ("ja?", "vielleicht"):
        again = await chat.say(unclear)
        assert again["nachricht"] == "Darf ich deinen Ordner lesen?", unclear
        assert again[FIELD_AWAITING] == YES_NO, unclear
        assert await roots_of(db) == [], unclear
        assert await redis.exists(keys.pending_agent("anna")), unclear
    asked = [c for c in scripted.calls if ASKED + "Darf ich deinen Ordner" in c["prompt"]]
    assert len(asked) == 3, "the same question, asked three times"
    assert await indexed(db) == (0, 0)


@pytest.fixture
def secret(tmp_path: Path) -> Any:
    outside = tmp_path / "draussen"
    outside.mkdir()
    folder = notes_folder(outside, "Geheim")
    forbid(folder)
    yield folder
    forget()


async def test_a_folder_outside_the_offered_ones_is_refused_in_words_and_never_opened(
    chat: Chat, scripted: ScriptedLLM, db: AsyncConnectionPool, redis: aioredis.Redis, secret: Path
) -> None:
    nova_says(scripted, FAILED, "Den Ordner darf ich nicht lesen.")
    refused = await chat.say(f"Du darfst meinen Ordner {secret} lesen")
    assert refused["nachricht"] == "Den Ordner darf ich nicht lesen."
    assert refused[FIELD_AWAITING] is None
    [responder] = [c["prompt"] for c in scripted.calls if FAILED in c["prompt"]]
    line = responder.split(FAILED, 1)[1].splitlines()[0]
    print("\nrefusal:", line)
    assert line == (
        f"{secret} liegt außerhalb der Ordner, die ich hier lesen darf "
        f"(freigeben kannst du Ordner in {secret.parent.parent.resolve() / 'erlaubt'})."
    )
    assert touched() == [], "a folder nobody may approve was opened"
    assert await roots_of(db) == []
    assert not await redis.exists(keys.pending_agent("anna"))


async def test_revoking_a_folder_that_was_never_approved_says_so(
    chat: Chat, scripted: ScriptedLLM, db: AsyncConnectionPool, folder: Path
) -> None:
    nova_says(scripted, FAILED, "Den hattest du mir gar nicht freigegeben.")
    await chat.say(f"Du darfst {folder} nicht mehr lesen")
    [responder] = [c["prompt"] for c in scripted.calls if FAILED in c["prompt"]]
    assert f"{FAILED}{folder} hast du mir nicht freigegeben" in responder
    assert await roots_of(db) == []
