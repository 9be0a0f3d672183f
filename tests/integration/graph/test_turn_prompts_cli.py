"""`novaberg turn --prompts`: every model call of the turn with its node, schema and the
full prompt it sent, in call order (scripted model, the test's Redis and PostgreSQL)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from graph_helpers import judge_schemas
from typer.testing import CliRunner

from novaberg.cli import app
from novaberg.config import load_settings
from novaberg.runtime.services import Endpoints

HEADER = re.compile(r"^─*\s*#(\d+) (\S+) · (\S+) · (\S+)\s*─*$")

PLAIN_TURN = [
    {
        "match": ".*",
        "schema": "RouterDecision",
        "output": {"momentum": "mid", "management_action": "", "management_target": ""},
    },
    {"match": ".*", "schema": "JuristVerdict", "output": {"score": 0.05, "direktiven_score": 0}},
    {"match": ".*", "schema": "PsychologistVerdict", "output": {"score": 0.05}},
    {"match": ".*", "schema": "EthicistVerdict", "output": {"score": 0.05}},
]
"""A plain turn: no agent, the judges accept (the scripted model's rule file)."""


@pytest.fixture
def cli_env(endpoints: Endpoints, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "plain.json"
    script.write_text(json.dumps(PLAIN_TURN), encoding="utf-8")
    for name, value in {
        "NOVABERG_HOME": str(tmp_path),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_SCRIPT": str(script),
        "NOVABERG_EMBED_DIM": "384",
        "COLUMNS": "200",
    }.items():
        monkeypatch.setenv(name, value)


def _calls(output: str) -> list[tuple[str, str, str, str]]:
    """(number, graph/node, schema, role) of every call header, then the text under each."""
    return [m.groups() for line in output.splitlines() if (m := HEADER.match(line))]


def _section(output: str, source: str) -> str:
    """The printed prompt of the first call made by `source`."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if (m := HEADER.match(line)) and m[2] == source)
    end = next((i for i in range(start + 1, len(lines)) if HEADER.match(lines[i])), len(lines))
    return "\n".join(lines[start + 1 : end])


def test_prompts_prints_every_call_with_node_schema_and_prompt(cli_env: None) -> None:
    result = CliRunner().invoke(
        app, ["turn", "Ich habe morgen eine Prüfung.", "--user", "promptleser", "--prompts"]
    )
    assert result.exit_code == 0, result.output
    calls = _calls(result.output)
    assert [int(number) for number, *_ in calls] == list(range(1, len(calls) + 1))
    by_source = {source: (schema, role) for _, source, schema, role in calls}
    assert by_source["human/perception"][0] == "PerceptionResult"
    assert by_source["character/router"] == ("RouterDecision", "analysis")
    assert by_source["character/composer"][0] == "text"
    assert {"character/responder", "character/tribunal"} <= set(by_source)
    # in call order: Path 1's perception first, the router before the composer before the
    # responder
    sources = [source for _, source, _, _ in calls]
    assert sources[0] == "human/perception"
    assert sources.index("character/router") < sources.index("character/composer")
    assert sources.index("character/composer") < sources.index("character/responder")
    # the full prompt, every message under its role, block names kept as written
    router = _section(result.output, "character/router")
    assert "[AUFGABE]" in router and "Entscheide, was dieser Gesprächszug braucht." in router
    assert "Ich habe morgen eine Prüfung." in router
    composer = _section(result.output, "character/composer")
    assert "Ich habe morgen eine Prüfung." in composer
    assert re.search(r"^\[(user|system)\]$", composer, re.MULTILINE)
    # the tribunal's three judges are told apart by their schemas (compact: one panel)
    judges = {schema for _, source, schema, _ in calls if source == "character/tribunal"}
    assert judges == judge_schemas(load_settings().turn_profile)


def test_without_prompts_no_call_is_printed(cli_env: None) -> None:
    result = CliRunner().invoke(app, ["turn", "Hallo Nova", "--user", "ohneprompts"])
    assert result.exit_code == 0, result.output
    assert _calls(result.output) == [] and "in call order" not in result.output
