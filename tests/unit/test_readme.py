"""The README's configuration table lists every setting."""

from __future__ import annotations

from pathlib import Path

from novaberg.config import ENV_PREFIX, Settings

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_setting_has_a_row_in_the_configuration_table() -> None:
    rows = {
        line.split("|")[1].strip().strip("`")
        for line in README.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `" + ENV_PREFIX)
    }
    expected = {ENV_PREFIX + name.upper() for name in Settings.model_fields}
    assert expected - rows == set(), "settings missing from README's Configuration table"
    assert rows - expected == set(), "README documents settings that do not exist"
