"""`novaberg turn` refuses what POST /chat refuses, before it starts anything."""

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
