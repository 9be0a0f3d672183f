"""`novaberg character pause|activate ID [--user U]`: the flag is the user's own, an unknown
character is refused with one line and exit code 2, and activating takes up what waited."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
import redis as redis_lib
from typer.testing import CliRunner

from novaberg.cli import app
from novaberg.events.model import build_event
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import keys

ANNA = Pair("anna", "nova")


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


def active_flags(endpoints: Endpoints) -> dict[tuple[str, str], bool]:
    with psycopg.connect(endpoints.database_url) as conn:
        rows = conn.execute("SELECT user_id, character_id, aktiv FROM charakter_aktivierung")
        return {(u, c): a for u, c, a in rows.fetchall()}


def test_pause_then_activate_takes_up_what_waited(
    cli_env: None, endpoints: Endpoints, db: object, redis: object
) -> None:
    runner = CliRunner()
    paused = runner.invoke(app, ["character", "pause", "nova", "--user", "anna"])
    assert paused.exit_code == 0, paused.output
    assert "nova paused for anna" in paused.output
    assert active_flags(endpoints) == {("anna", "nova"): False}

    held = build_event(
        user_id="anna",
        character_id="nova",
        source="user",
        typ="message",
        payload={"turn_id": "t1", "nachrichten_ids": ["m1"], "user_prompt": "Hallo?"},
    ).wire()
    client = redis_lib.Redis.from_url(endpoints.redis_url, decode_responses=True)
    client.rpush(keys.parked_events(ANNA), held)
    client.sadd(keys.paused_pairs(), str(ANNA))

    activated = runner.invoke(app, ["character", "activate", "nova", "--user", "anna"])
    assert activated.exit_code == 0, activated.output
    assert "1 waiting message(s) queued" in activated.output
    assert active_flags(endpoints) == {("anna", "nova"): True}
    assert client.lrange(keys.event_queue(ANNA), 0, -1) == [held]
    assert not client.exists(keys.parked_events(ANNA))
    client.close()


def test_an_unknown_character_is_refused(cli_env: None, endpoints: Endpoints, db: object) -> None:
    result = CliRunner().invoke(app, ["character", "pause", "niemand", "--user", "anna"])
    assert result.exit_code == 2
    assert "unknown character 'niemand' for anna" in result.output
    assert active_flags(endpoints) == {}
