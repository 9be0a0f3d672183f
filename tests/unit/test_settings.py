"""Settings: defaults, derived backends, and bad values named by their variable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from novaberg.cli import app as cli
from novaberg.config import (
    EmbedBackend,
    LLMBackend,
    Role,
    Settings,
    SettingsError,
    load_settings,
)
from novaberg.llm.embeddings import LocalEmbedder, RemoteEmbedder


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("NOVABERG_"):
            monkeypatch.delenv(name)


def test_defaults() -> None:
    settings = load_settings()
    assert settings.home == Path.home() / ".local/share/novaberg"
    assert (settings.host, settings.port) == ("127.0.0.1", 8765)
    assert settings.llm_backend is LLMBackend.LOCAL
    assert settings.embed_backend is EmbedBackend.LOCAL
    assert settings.embed_dim == 384
    assert settings.gate_slots == 1
    assert settings.tz.key == "Europe/Berlin"


def test_llm_url_switches_to_the_remote_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOVABERG_LLM_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("NOVABERG_LLM_MODEL_ANALYSIS", "qwen2.5")
    monkeypatch.setenv("NOVABERG_LLM_URL_BACKGROUND", "http://gpu:8000/v1")
    settings = load_settings()
    assert settings.llm_backend is LLMBackend.OPENAI
    assert settings.embed_backend is EmbedBackend.LOCAL  # embeddings are configured apart
    assert settings.gate_slots == 4
    assert settings.model_for(Role.CHAT) == "llama3.1"
    assert settings.model_for(Role.ANALYSIS) == "qwen2.5"
    assert settings.url_for(Role.CHAT) == "http://localhost:11434/v1"
    assert settings.url_for(Role.BACKGROUND) == "http://gpu:8000/v1"


def test_scripted_llm_implies_scripted_embeddings() -> None:
    assert load_settings(llm="scripted").embed_backend is EmbedBackend.SCRIPTED
    assert load_settings(llm="scripted", embed="local").embed_backend is EmbedBackend.LOCAL


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("NOVABERG_PORT", "abc", "valid integer"),
        ("NOVABERG_PORT", "70000", "less than or equal"),
        ("NOVABERG_TIMEZONE", "Mars/Olympus_Mons", "unknown time zone"),
        ("NOVABERG_LOG_LEVEL", "loud", "unknown log level"),
        ("NOVABERG_LLM", "gpt", "local"),
        ("NOVABERG_LLM_TIMEOUT", "0", "greater than 0"),
    ],
)
def test_bad_value_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, words: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith(variable + ":")
    assert words in message
    assert repr(value) in message


def test_embedder_settings_are_checked_before_any_model_loads() -> None:
    with pytest.raises(SettingsError, match=r"^NOVABERG_EMBED_DIM"):
        LocalEmbedder(load_settings(embed_dim=768))
    with pytest.raises(SettingsError, match=r"^NOVABERG_EMBED_URL"):
        RemoteEmbedder(load_settings(embed="openai"))


def test_cli_prints_one_red_line_and_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOVABERG_PORT", "abc")
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("NOVABERG_PORT:")


def test_cli_version() -> None:
    from novaberg import __version__

    result = CliRunner().invoke(cli, ["version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"novaberg {__version__}"


def test_settings_are_frozen() -> None:
    settings: Settings = load_settings()
    with pytest.raises(ValueError):
        settings.port = 1  # type: ignore[misc]
