"""`novaberg memory search`: ranked hits of both memories with source and score."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import psycopg
import pytest
import redis as redis_lib
from pgvector.psycopg import register_vector
from typer.testing import CliRunner

from novaberg.cli import app
from novaberg.llm.scripted import ScriptedEmbedder
from novaberg.runtime.services import Endpoints
from novaberg.store import keys
from novaberg.store.keys import Pair
from novaberg.store.kzg_codec import encode_vector

PAIR = Pair("meister", "nova")


@pytest.fixture
def seeded(endpoints: Endpoints, db: object, redis: object) -> None:
    """One short-term entry and two long-term nodes (sync clients: the CLI runs its own loop)."""
    embed = ScriptedEmbedder(384).vector
    client = redis_lib.Redis.from_url(endpoints.redis_url)
    key = keys.kzg_entry(PAIR, 1)
    client.hset(
        key,
        mapping={
            "user_id": "meister",
            "character_id": "nova",
            "inhalt": "Der Nutzer segelt gern am Gardasee.",
            "salienz": "0.9",
            "beobachter": "user",
            "embedding": encode_vector(embed("Der Nutzer segelt gern am Gardasee.")),
        },
    )
    client.sadd(keys.kzg_index(PAIR), key)
    client.close()
    with psycopg.connect(endpoints.database_url, autocommit=True) as conn:
        register_vector(conn)
        for i, text in enumerate(
            ("Segeln am Gardasee im Sommer.", "Steuererklaerung beim Finanzamt.")
        ):
            conn.execute(
                "INSERT INTO lzg_knoten (kzg_quell_key, user_id, character_id, inhalt, embedding,"
                " gewicht_roh, gewicht_absolut, gewicht_decay) VALUES (%s, 'meister', 'nova', %s, %s, 1, 3, 3)",
                (f"k{i}", text, np.asarray(embed(text), dtype=np.float32)),
            )


def test_search_prints_ranked_hits_with_source(
    seeded: None, endpoints: Endpoints, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "NOVABERG_HOME": str(tmp_path),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_EMBED_DIM": "384",
    }.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(
        app,
        [
            "memory",
            "search",
            "--user",
            "meister",
            "--character",
            "nova",
            "--json",
            "segelt Gardasee",
        ],
    )
    assert result.exit_code == 0, result.output
    hits = [json.loads(line) for line in result.output.splitlines()]
    assert [h["rang"] for h in hits] == [1, 2, 3]
    assert hits[0]["source"] == "kzg" and "Gardasee" in hits[0]["text"]
    assert hits[1]["source"] == "lzg" and "Gardasee" in hits[1]["text"]
    assert hits[2]["text"].startswith("Steuer")
    assert hits[0]["cosine"] >= hits[1]["cosine"] >= hits[2]["cosine"]
    table = CliRunner().invoke(app, ["memory", "search", "Gardasee"])
    assert table.exit_code == 0 and "kzg" in table.output and "lzg" in table.output
