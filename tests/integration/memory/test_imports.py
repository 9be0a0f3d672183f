"""`novaberg import chat|card` and their HTTP equivalents: progress, idempotent and resumable
imports, skipped lines named, bad files refused whole (exit code 2, nothing stored)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from typer.testing import CliRunner, Result

from app_client import signed_in_client
from novaberg.cli import app
from novaberg.config import Settings
from novaberg.imports.cards import png_without_card
from novaberg.imports.chat_formats import parse_chat
from novaberg.imports.chat_import import import_chat
from novaberg.llm.errors import ModelUnavailable
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import characters
from novaberg.store.short_term import ShortTermStore

PAIR = Pair("meister", "nova")
START = datetime(2025, 11, 1, 9, 0, tzinfo=UTC)
CARD: dict[str, Any] = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Käthe",
        "description": "Eine Leuchtturmwärterin an der Nordsee.",
        "personality": "wortkarg, herzlich",
        "scenario": "Ein stürmischer Abend.",
        "first_mes": "Moin. Auch unterwegs bei dem Wetter?",
        "mes_example": "{{user}}: Hallo\n{{char}}: Moin.",
        "character_book": {
            "entries": [
                {
                    "keys": ["Flint"],
                    "content": "Käthes Hund heißt Flint und fürchtet Gewitter.",
                    "enabled": True,
                    "insertion_order": 0,
                },
                {
                    "keys": ["Roter Sand"],
                    "content": "Der Leuchtturm Roter Sand steht seit 1885.",
                    "enabled": True,
                    "insertion_order": 1,
                },
            ]
        },
    },
}


def chat_lines(count: int, *, facts: dict[int, str] | None = None) -> list[str]:
    """`count` plain JSONL turns over weeks; `facts` puts given texts at given positions."""
    topics = ["das Wetter", "die Arbeit", "das Kochen", "den Sport", "einen Film", "den Garten"]
    lines = []
    for i in range(count):
        text = (facts or {}).get(i) or f"Heute ging es um {topics[i % len(topics)]}, Nummer {i}."
        lines.append(
            json.dumps(
                {
                    "id": f"t{i}",
                    "speaker": "user" if i % 2 == 0 else "character",
                    "text": text,
                    "time": (START + timedelta(minutes=37 * i)).isoformat(),
                },
                ensure_ascii=False,
            )
        )
    return lines


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


async def count(db: AsyncConnectionPool, sql: str) -> int:
    async with db.connection() as conn:
        row = await (await conn.execute(sql)).fetchone()
        return int(next(iter(row.values())))


async def test_a_2000_turn_chat_is_imported_once_with_a_progress_bar(
    cli_env: Path, db: AsyncConnectionPool
) -> None:
    lines = chat_lines(2000, facts={10: "Mein Nachbar heißt übrigens Korbinian Wegscheider."})
    lines.insert(500, "{this line is broken")
    lines.insert(900, json.dumps({"id": "x", "speaker": "robot", "text": "?", "time": 1}))
    path = cli_env / "verlauf.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    first = await cli("import", "chat", str(path))
    assert first.exit_code == 0, first.output
    assert "2000 new turn(s) archived for meister/nova" in first.stdout
    assert "archiving" in first.stderr and "2000/2000" in first.stderr
    assert "line 501: broken JSON" in first.stderr and "line 901: speaker must be" in first.stderr
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 2000

    again = await cli("import", "chat", str(path), "--json")
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert (report["neu"], report["vorhanden"]) == (0, 2000)
    assert [p["stelle"] for p in report["uebersprungen"]] == ["line 501", "line 901"]
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 2000

    found = await cli("memory", "search", "--json", "Korbinian")
    hit = json.loads(found.stdout.splitlines()[0])
    assert hit["text"].startswith("Mein Nachbar heißt") and hit["sources"][0]["source_id"] == "t10"


class FailingEmbedder(ScriptedEmbedder):
    """Embeds `budget` batches, then fails as an unreachable embedding server would."""

    def __init__(self, budget: int) -> None:
        super().__init__(384)
        self.budget = budget

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.budget <= 0:
            raise ModelUnavailable("embedding server gone")
        self.budget -= 1
        return await super().embed(texts)


async def test_an_interrupted_import_resumes_where_it_stopped(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    parsed = parse_chat("\n".join(chat_lines(300)).encode(), tz=ZoneInfo("UTC"), name="c")
    broken = ModelLayer(model.text, FailingEmbedder(budget=2))
    done: list[int] = []
    with pytest.raises(ModelUnavailable):
        await import_chat(db, broken, PAIR, parsed, batch=64, progress=done.append)
    assert done == [64, 64]
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 128, "whole batches only"
    resumed = await import_chat(db, model, PAIR, parsed, batch=64)
    assert (resumed.new, resumed.existing) == (172, 128)
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 300
    assert (
        await count(db, "SELECT count(*) FROM gespraechsarchiv WHERE embedding_kontext IS NULL")
        == 1
    ), "every turn but the first has its context view, across the interruption"


async def test_distil_turns_imported_turns_into_short_term_memories_with_their_source(
    cli_env: Path, db: AsyncConnectionPool, redis: aioredis.Redis
) -> None:
    rules = cli_env / "rules.json"
    score = {
        "themen": ["nachbar"],
        "emotionen": {"explizit": [], "implizit": [], "valenz": "neutral"},
        "salienz": 0.95,
        "gedaechtnistyp": "lang",
        "dimension": "kontext",
        "begruendung": "Name",
        "intentionen": ["information_teilen"],
        "entitaeten_roh": [],
        "zeitausdruck_roh": "",
    }
    rules.write_text(
        json.dumps(
            [
                {"match": r"\[TEXT\]\nMein Nachbar", "schema": "SalienceScore", "output": score},
                {"match": ".*", "schema": "SalienceScore", "output": {**score, "salienz": 0.1}},
                {"match": "Korbinian", "output": "Der Nachbar des Nutzers heißt Korbinian."},
            ]
        )
    )
    path = cli_env / "kurz.jsonl"
    path.write_text("\n".join(chat_lines(6, facts={2: "Mein Nachbar heißt Korbinian."})))
    result = await asyncio.to_thread(
        CliRunner().invoke,
        app,
        ["import", "chat", str(path), "--distil"],
        env={"NOVABERG_SCRIPT": str(rules)},
    )
    assert result.exit_code == 0, result.output
    assert "distilled 6 turn(s) into 1 memories" in result.stdout
    (entry,) = await ShortTermStore(redis).entries(PAIR)
    assert entry.fields["inhalt"] == "Der Nachbar des Nutzers heißt Korbinian."
    assert entry.fields["turn_id"] == "import:jsonl:t2"
    assert (
        await count(db, "SELECT count(*) FROM gespraechsarchiv WHERE destilliert_am IS NULL") == 0
    )
    again = await asyncio.to_thread(
        CliRunner().invoke,
        app,
        ["import", "chat", str(path), "--distil", "--json"],
        env={"NOVABERG_SCRIPT": str(rules)},
    )
    assert json.loads(again.stdout)["destilliert"]["turns"] == 0, "nothing is distilled twice"
    found = await cli("memory", "search", "--json", "Korbinian")
    short = next(json.loads(line) for line in found.stdout.splitlines() if '"kzg"' in line)
    assert [(s["layer"], s["source_id"]) for s in short["sources"]] == [
        ("kzg", None),
        ("archiv", "t2"),
    ]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("notes.txt", b"Liebes Tagebuch, heute ...", "not a chat export"),
        ("conversations.json", b'[{"title": "a", "mapping": {', "broken JSON at line 1"),
        ("other.json", b'{"users": [1, 2]}', "no line looks like a chat turn"),
        ("bild.png", b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
    ],
)
async def test_a_bad_chat_file_ends_with_one_line_and_stores_nothing(
    cli_env: Path, db: AsyncConnectionPool, name: str, content: bytes, message: str
) -> None:
    path = cli_env / name
    path.write_bytes(content)
    result = await cli("import", "chat", str(path))
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 0
    assert not (cli_env / "home").exists(), "refused before any service started"


async def test_an_unknown_character_or_user_is_refused(
    cli_env: Path, db: AsyncConnectionPool
) -> None:
    path = cli_env / "c.jsonl"
    path.write_text("\n".join(chat_lines(3)))
    unknown = await cli("import", "chat", str(path), "--character", "niemand")
    assert unknown.exit_code == 2 and "unknown character 'niemand'" in unknown.stderr
    bad_user = await cli("import", "chat", str(path), "--user", "a:b")
    assert bad_user.exit_code == 2
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 0


async def test_a_card_becomes_a_character_with_its_lore(
    cli_env: Path, db: AsyncConnectionPool, card_png: Any
) -> None:
    path = cli_env / "kaethe.png"
    path.write_bytes(card_png(CARD, "chara"))
    made = await cli("import", "card", str(path))
    assert made.exit_code == 0, made.output
    assert "character 'kaethe' (Käthe) created; 2 of 2 lorebook entries stored" in made.stdout
    assert "its picture is the avatar" in made.stdout
    async with db.connection() as conn:
        row = await (
            await conn.execute(
                "SELECT name, beschreibung, erste_nachricht, karten_hash FROM characters"
                " WHERE character_id = 'kaethe'"
            )
        ).fetchone()
        nodes = await (
            await conn.execute(
                "SELECT inhalt, themen, dimension, kzg_quell_key FROM lzg_knoten"
                " WHERE user_id = 'meister' AND character_id = 'kaethe' ORDER BY id"
            )
        ).fetchall()
    assert row["beschreibung"].startswith("Eine Leuchtturmwärterin") and row["karten_hash"]
    async with db.connection() as conn:
        picture = await characters.avatar(conn, "meister", "kaethe")
    assert picture is not None and picture[1] == "image/png"
    assert picture[0] == png_without_card(card_png(CARD, "chara")) and b"chara" not in picture[0]
    assert [(n["themen"], n["dimension"], n["kzg_quell_key"]) for n in nodes] == [
        (["Flint"], "wissen", "karte:meister:kaethe:0"),
        (["Roter Sand"], "wissen", "karte:meister:kaethe:1"),
    ]
    again = await cli("import", "card", str(path), "--json")
    assert json.loads(again.stdout) == {
        "character_id": "kaethe",
        "name": "Käthe",
        "neu": False,
        "lore_neu": 0,
        "lore": 2,
        "avatar": True,
    }
    chat = cli_env / "kaethe.jsonl"
    chat.write_text("\n".join(chat_lines(3)))
    theirs = await cli("import", "chat", str(chat), "--user", "anna", "--character", "kaethe")
    assert theirs.exit_code == 2 and "unknown character 'kaethe'" in theirs.stderr, "meister's"
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 0
    other = await cli("import", "card", str(path), "--user", "anna", "--json")
    assert json.loads(other.stdout)["neu"] is True, "another person gets a character of their own"
    assert json.loads(other.stdout)["lore_neu"] == 2, "another person gets the lore too"
    changed = {**CARD, "data": {**CARD["data"], "description": "Ganz anders."}}
    path.write_bytes(card_png(changed, "ccv3"))
    taken = await cli("import", "card", str(path))
    assert taken.exit_code == 2 and "exists already" in taken.stderr
    renamed = await cli("import", "card", str(path), "--id", "kaethe2")
    assert renamed.exit_code == 0, renamed.output
    found = await cli("memory", "search", "--json", "--character", "kaethe", "Flint")
    hit = json.loads(found.stdout.splitlines()[0])
    assert hit["layer"] == "lzg" and hit["sources"][1] == {
        "layer": "karte",
        "id": "karte:meister:kaethe:0",
        "turn_id": None,
        "nachrichten_ids": [],
        "source_id": None,
        "speaker": None,
        "speaker_name": None,
        "time": None,
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x00IEND\xaeB`\x82", "PNG without a character card"),
        (b'{"spec": "chara_card_v2", "data": {"description": "no name"}}', "no name"),
        (b"{broken", "broken JSON"),
    ],
)
async def test_a_bad_card_ends_with_one_line_and_stores_nothing(
    cli_env: Path, db: AsyncConnectionPool, content: bytes, message: str
) -> None:
    path = cli_env / "karte"
    path.write_bytes(content)
    result = await cli("import", "card", str(path))
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert await count(db, "SELECT count(*) FROM characters") == 1
    assert await count(db, "SELECT count(*) FROM lzg_knoten") == 0


@pytest.fixture
async def client(
    settings: Settings,
    endpoints: Endpoints,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in_client(
        settings, endpoints, redis, db, model, user="meister", gate="scripted-imports"
    ) as http:
        yield http


async def test_the_http_imports(
    client: httpx.AsyncClient, db: AsyncConnectionPool, card_png: Any
) -> None:
    png = card_png(CARD, "ccv3")
    created = await client.post("/characters", content=png, headers={"Content-Type": "image/png"})
    assert created.status_code == 201, created.text
    assert created.json()["character_id"] == "kaethe"
    assert (await client.post("/characters", content=png)).status_code == 200
    listed = (await client.get("/characters")).json()["characters"]
    assert [c["character_id"] for c in listed] == ["kaethe", "nova"]
    assert listed[0]["beschreibung"] == "Eine Leuchtturmwärterin an der Nordsee."
    assert "erste_nachricht" not in listed[0], "the list leaves long fields out"
    whole = (await client.get("/characters/kaethe")).json()
    assert whole["erste_nachricht"].startswith("Moin")
    refused = await client.post("/characters", content=b"\x89PNG\r\n\x1a\n")
    assert refused.status_code == 422 and refused.json()["detail"]["fehler"] == "keine_karte"
    big = await client.post("/characters", content=png + b"\x00" * (2 * 1024 * 1024))
    assert big.status_code == 201 or big.status_code == 200, "a card may exceed the 1 MiB default"

    body = "\n".join(chat_lines(5)).encode()
    imported = await client.post("/import/chat", params={"character": "kaethe"}, content=body)
    assert imported.status_code == 200, imported.text
    assert (imported.json()["neu"], imported.json()["format"]) == (5, "jsonl")
    again = await client.post("/import/chat", params={"character": "kaethe"}, content=body)
    assert again.json()["neu"] == 0
    bad = await client.post("/import/chat", params={"character": "kaethe"}, content=b"[oops")
    assert bad.status_code == 422 and bad.json()["detail"]["fehler"] == "kein_chat"
    missing = await client.post("/import/chat", params={"character": "niemand"}, content=body)
    assert missing.status_code == 404
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 5
    assert (
        await count(
            db,
            "SELECT count(*) FROM gespraechsarchiv WHERE character_id = 'kaethe'"
            " AND user_id = 'meister'",
        )
        == 5
    )
