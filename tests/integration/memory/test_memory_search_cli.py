"""`novaberg memory search`: ranked hits of every memory layer with layer, score and sources."""

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
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import keys
from novaberg.store.short_term_codec import encode_vector

PAIR = Pair("meister", "nova")


@pytest.fixture
def seeded(endpoints: Endpoints, db: object, redis: object) -> None:
    """One short-term entry and two long-term nodes (sync clients: the CLI runs its own loop)."""
    embed = ScriptedEmbedder(384).vector
    client = redis_lib.Redis.from_url(endpoints.redis_url)
    key = keys.short_term_entry(PAIR, 1)
    client.hset(
        key,
        mapping={
            "user_id": "meister",
            "character_id": "nova",
            "inhalt": "Der Nutzer segelt gern am Gardasee.",
            "salienz": "0.9",
            "beobachter": "user",
            "turn_id": "turn-1",
            "erstellt_am": "1790000000.0",
            "embedding": encode_vector(embed("Der Nutzer segelt gern am Gardasee.")),
        },
    )
    client.sadd(keys.short_term_index(PAIR), key)
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
        conn.execute("INSERT INTO verbindung (turn_id, kzg_id) VALUES ('turn-0', 'k0')")
        conn.execute(
            "INSERT INTO gespraechsarchiv (user_id, character_id, sprecher, inhalt, zeit,"
            " turn_id, nachrichten_ids, herkunft, quelle, quell_id, sprache) VALUES"
            " ('meister', 'nova', 'user', 'Ich segle so gern am Gardasee!', now(), 'turn-0',"
            " '{m-0}', 'user', 'live', 'turn-0:user:0', 'german')"
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
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    by_layer = {h["layer"]: h for h in hits}
    assert set(by_layer) == {"archiv", "kzg", "lzg"}
    assert all("Gardasee" in h["text"] for h in hits), "the tax node shares no word or meaning"
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert by_layer["kzg"]["sources"][0] == {
        "layer": "kzg",
        "id": keys.short_term_entry(PAIR, 1),
        "turn_id": "turn-1",
        "nachrichten_ids": [],
        "source_id": None,
        "speaker": None,
        "speaker_name": None,
        "time": None,
    }
    lzg_sources = by_layer["lzg"]["sources"]
    assert [(s["layer"], s["id"]) for s in lzg_sources[:2]] == [
        ("lzg", by_layer["lzg"]["id"]),
        ("kzg", "k0"),
    ]
    assert lzg_sources[2]["layer"] == "archiv" and lzg_sources[2]["nachrichten_ids"] == ["m-0"]
    archived = by_layer["archiv"]
    assert archived["sources"][0]["turn_id"] == "turn-0" and archived["time"]
    assert set(archived["signals"]) <= {"vektor", "vektor_kontext", "lexikalisch", "trigramm"}
    table = CliRunner().invoke(app, ["memory", "search", "Gardasee"])
    assert table.exit_code == 0
    assert all(layer in table.stdout for layer in ("archiv", "kzg", "lzg"))
