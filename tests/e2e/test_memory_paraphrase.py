"""From a file to a found fact with the bundled embedder (all-MiniLM-L6-v2, English): a
chat imported with `novaberg import chat`, then `novaberg memory search` finds a fact by a
rare name and by a paraphrase that shares no word with it, each hit with its source."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from novaberg.cli import app
from novaberg.runtime.services import Endpoints

pytestmark = pytest.mark.model

FILLER = [
    "Work was very busy today.",
    "We watched a crime story last night.",
    "I'm cooking a vegetable soup.",
    "The weather is grey and rainy.",
    "I went shopping in town.",
    "That sounds exhausting!",
    "Tell me more about it.",
]
FACTS = {
    "spiders": "I am terrified of spiders.",
    "dentist": "My dentist is called Hildegard Pfannenstiel, by the way.",
}


async def test_a_fact_is_found_by_a_rare_name_and_by_a_paraphrase(
    endpoints: Endpoints, db: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = datetime(2026, 1, 5, 18, 0, tzinfo=UTC)
    lines = []
    for i in range(200):
        ident = "spiders" if i == 40 else "dentist" if i == 120 else f"t{i}"
        text = FACTS.get(ident) or f"{FILLER[i % len(FILLER)]} ({i})"
        speaker = "user" if i % 2 == 0 else "character"
        when = (start + timedelta(hours=5 * i)).isoformat()
        lines.append(json.dumps({"id": ident, "speaker": speaker, "text": text, "time": when}))
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(lines))
    for name, value in {
        "NOVABERG_HOME": str(tmp_path / "home"),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_EMBED": "local",
    }.items():
        monkeypatch.setenv(name, value)

    def run(*args: str) -> list[dict]:
        result = CliRunner().invoke(app, list(args))
        assert result.exit_code == 0, result.output
        return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]

    (report,) = await asyncio.to_thread(run, "import", "chat", str(path), "--json")
    assert report["neu"] == 200
    by_name = await asyncio.to_thread(run, "memory", "search", "--json", "Pfannenstiel")
    assert by_name[0]["sources"][0]["source_id"] == "dentist"
    by_meaning = await asyncio.to_thread(
        run, "memory", "search", "--json", "--limit", "3", "Which creatures scare me most?"
    )
    assert "spiders" in [hit["sources"][0]["source_id"] for hit in by_meaning]
