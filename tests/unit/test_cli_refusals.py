"""The CLI refuses bad input and impossible settings with one line and exit code 2,
before it starts any service."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from novaberg.cli import app


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["turn", ""], "text_leer"),
        (["turn", " \n "], "text_leer"),
        (["turn", "Hallo\x00"], "text_ungueltig"),
        (["turn", "Hallo", "--user", "anna:nova"], "invalid user id"),
    ],
    ids=["empty", "blank", "nul", "bad user"],
)
def test_turn_refuses_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, args, env={"NOVABERG_HOME": str(tmp_path)})
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not any(tmp_path.iterdir()), "no service was started"


@pytest.mark.parametrize(
    "command",
    [
        ["serve"],
        ["worker"],
        ["turn", "Hallo"],
        ["memory", "search", "x"],
        ["import", "chat", "verlauf.jsonl"],
        ["import", "card", "karte.png"],
    ],
)
@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"NOVABERG_LLM": "openai"}, "NOVABERG_LLM_URL"),
        ({"NOVABERG_EMBED": "openai"}, "NOVABERG_EMBED_URL"),
        ({"NOVABERG_EMBED_DIM": "768"}, "NOVABERG_EMBED_DIM"),
    ],
    ids=["llm without url", "embed without url", "dim of the bundled embedder"],
)
def test_settings_that_contradict_each_other_stop_every_command(
    tmp_path: Path, command: list[str], env: dict[str, str], variable: str
) -> None:
    """One line naming the variable and exit code 2, before any service starts."""
    result = CliRunner().invoke(app, command, env={"NOVABERG_HOME": str(tmp_path), **env})
    assert result.exit_code == 2, result.output
    assert variable in result.output
    assert not any(tmp_path.iterdir()), "no service was started"


@pytest.mark.parametrize("command", ["serve", "api"])
def test_a_taken_port_is_refused_before_anything_starts(tmp_path: Path, command: str) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            app,
            [command, "--port", str(port)],
            env={"NOVABERG_HOME": str(tmp_path), "NOVABERG_LLM": "scripted"},
        )
    assert result.exit_code == 2, result.output
    assert f"127.0.0.1:{port} is not available" in result.output
    assert not any(tmp_path.iterdir()), "no service was started"


@pytest.mark.parametrize("kind", ["chat", "card"])
def test_an_unreadable_import_file_is_refused_before_anything_starts(
    tmp_path: Path, kind: str
) -> None:
    missing = tmp_path / "nicht-da.jsonl"
    result = CliRunner().invoke(
        app, ["import", kind, str(missing)], env={"NOVABERG_HOME": str(tmp_path / "home")}
    )
    assert result.exit_code == 2, result.output
    assert "cannot read" in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "home").exists(), "no service was started"


def test_chat_without_a_token_or_a_server_says_so(tmp_path: Path) -> None:
    env = {"NOVABERG_HOME": str(tmp_path)}
    result = CliRunner().invoke(app, ["chat"], env=env)
    assert result.exit_code == 2, result.output
    assert "no token" in result.output
    args = ["chat", "--token", "t", "--url", "http://127.0.0.1:9"]
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 2, result.output
    assert "no Novaberg server at http://127.0.0.1:9" in result.output
    assert not any(tmp_path.iterdir()), "a client starts no service"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["user", "revoke"], "name what to revoke"),
        (["user", "revoke", "nvb_x", "--all", "anna"], "name what to revoke"),
        (["user", "revoke", "--label", "laptop", "--all", "anna"], "name what to revoke"),
        (["user", "revoke", "--user", "anna"], "name what to revoke"),
        (["user", "revoke", "nvb_x", "--user", "anna"], "--user only narrows --label"),
        (["user", "revoke", " "], "the token is empty"),
        (["user", "revoke", "--label", ""], "the label is empty"),
        (["user", "revoke", "--all", "anna:nova"], "invalid user id"),
        (["user", "revoke", "--label", "laptop", "--user", "an na"], "invalid user id"),
        (["user", "tokens", "anna:nova"], "invalid user id"),
    ],
    ids=[
        "nothing",
        "token and all",
        "label and all",
        "user alone",
        "user with a token",
        "blank token",
        "empty label",
        "bad user for all",
        "bad user for label",
        "bad user for tokens",
    ],
)
def test_user_revoke_refuses_bad_arguments(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, args, env={"NOVABERG_HOME": str(tmp_path)})
    assert result.exit_code == 2, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir()), "no service was started"


DEEP = "[" * 3000 + "]" * 3000
"""Where json.loads recursed out (`RecursionError`, a traceback and exit code 1)."""


def _card(**data: object) -> bytes:
    import json

    return json.dumps({"spec": "chara_card_v2", "data": {"name": "Käthe", **data}}).encode()


def _lines(count: int) -> bytes:
    import json

    turns = [{"id": i, "speaker": "user", "text": "Hallo", "time": i + 1} for i in range(count)]
    return "\n".join(json.dumps(t) for t in turns).encode()


@pytest.mark.parametrize(
    ("kind", "content", "env", "message"),
    [
        ("card", _card(name="K").replace(b'"K"', DEEP.encode()), {}, "deeper than 64 levels"),
        ("chat", DEEP.encode(), {}, "deeper than 64 levels"),
        (
            "card",
            _card(description="x" * 70_000),
            {"NOVABERG_MAX_CARD_BYTES": "65536"},
            "bytes, over the limit of 65,536 bytes (NOVABERG_MAX_CARD_BYTES)",
        ),
        (
            "card",
            _card(description="x" * 1001),
            {"NOVABERG_MAX_CARD_FIELD_CHARS": "1000"},
            "the card's field 'description' has 1,001 characters",
        ),
        (
            "card",
            _card(character_book={"entries": [{"content": "c"}] * 11}),
            {"NOVABERG_MAX_LORE_ENTRIES": "10"},
            "over the limit of 10 entries (NOVABERG_MAX_LORE_ENTRIES)",
        ),
        (
            "chat",
            _lines(101),
            {"NOVABERG_MAX_IMPORT_LINES": "100"},
            "has 101 lines, over the limit of 100 lines (NOVABERG_MAX_IMPORT_LINES)",
        ),
        (
            "chat",
            _lines(2000),
            {"NOVABERG_MAX_IMPORT_BYTES": "65536"},
            "over the limit of 65,536 bytes (NOVABERG_MAX_IMPORT_BYTES)",
        ),
    ],
    ids=["deep card", "deep chat", "card size", "card field", "lorebook", "lines", "chat size"],
)
def test_an_import_file_too_deep_or_over_a_limit_ends_with_one_line(
    tmp_path: Path, kind: str, content: bytes, env: dict[str, str], message: str
) -> None:
    """No traceback: one line naming what is wrong (and the setting), exit code 2, before
    any service starts."""
    path = tmp_path / "datei"
    path.write_bytes(content)
    home = tmp_path / "home"
    result = CliRunner().invoke(
        app, ["import", kind, str(path)], env={"NOVABERG_HOME": str(home), **env}
    )
    assert result.exit_code == 2, result.output
    assert message in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not home.exists(), "no service was started"
