"""`novaberg pixie run JOB [--user --character]` runs one job now, limited to one pair;
`novaberg pixie status` shows lanes, last runs, failures and stack/queue sizes per pair."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
import redis as redis_lib
from typer.testing import CliRunner

from novaberg.cli import app
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import keys


@pytest.fixture
def cli_env(endpoints: Endpoints, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "NOVABERG_HOME": str(tmp_path),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_EMBED_DIM": "384",
    }.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def seeded(endpoints: Endpoints, db: object, redis: object) -> None:
    """Two pairs under pressure with a follow-up each (sync clients: the CLI has its loop)."""
    client = redis_lib.Redis.from_url(endpoints.redis_url)
    for user in ("anna", "bert"):
        client.rpush(
            keys.session_turns(Pair(user, "nova")),
            json.dumps({"rolle": "user", "emotion": "traurigkeit", "emotions_vektor": "absturz"}),
        )
    client.close()
    with psycopg.connect(endpoints.database_url, autocommit=True) as conn:
        for user in ("anna", "bert"):
            conn.execute(
                "INSERT INTO shadow_auftrag (user_id, character_id, aufgabe, thema,"
                " salienz_roh, salienz_absolut, salienz_decay, erstellt_am)"
                " VALUES (%s, 'nova', 'nachfragen', 'Vater', 0.5, 0.5, 0.5, %s)",
                (user, datetime.now(UTC)),
            )


def test_run_one_job_for_one_pair_then_status(seeded: None, cli_env: None) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["pixie", "run", "nachfragen", "--user", "bert", "--character", "nova"]
    )
    assert result.exit_code == 0, result.output
    ran = json.loads(result.output.strip().splitlines()[-1])
    assert ran["status"] == "ran" and ran["detail"]["eintrag"]

    status = runner.invoke(app, ["pixie", "status", "--json"])
    assert status.exit_code == 0, status.output
    report = json.loads(status.output.strip().splitlines()[-1])
    assert report["paare"]["bert:nova"] == {"stapel": 1, "warteschlange": 0, "geparkt": []}
    assert report["paare"]["anna:nova"] == {"stapel": 0, "warteschlange": 1, "geparkt": []}, (
        "only bert's ran"
    )
    jobs = {j["job"]: j for j in report["jobs"]}
    assert jobs["nachfragen"]["ergebnis"] == "ok" and jobs["nachfragen"]["lane"] == "cpu"
    assert set(report["lanes"]) == {"cpu", "llm"}

    table = runner.invoke(app, ["pixie", "status"])
    assert table.exit_code == 0 and "nachfragen" in table.output and "bert:nova" in table.output


def test_an_unknown_job_is_refused(cli_env: None, db: object) -> None:
    result = CliRunner().invoke(app, ["pixie", "run", "traeumen"])
    assert result.exit_code == 2 and "unknown job" in result.output
