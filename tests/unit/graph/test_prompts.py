"""The [BLOCKNAME] prompt renderer."""

from __future__ import annotations

from pathlib import Path

import pytest

import novaberg.prompts as prompts

TEMPLATE = """\
[IDENTITAET]
Du bist {name}.

[KONTEXT?]
Bisheriges Gespräch:
{verlauf}

[AUFGABE@human]
Bewerte die Äußerung des Nutzers.

[AUFGABE@character]
Bewerte deine eigene Antwort.

[REGELN]
Antworte nur mit JSON wie {"salienz": 0.5}.
Text: {text}
"""


@pytest.fixture
def template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "probe.txt").write_text(TEMPLATE, encoding="utf-8")
    monkeypatch.setattr(prompts, "PROMPT_DIR", tmp_path)
    prompts.load_prompt.cache_clear()
    prompts.parse_blocks.cache_clear()
    yield "probe"
    prompts.load_prompt.cache_clear()
    prompts.parse_blocks.cache_clear()


def test_optional_block_with_empty_content_is_omitted(template: str) -> None:
    text = prompts.render(template, variant="human", name="Nova", verlauf="", text="Hallo")
    assert "[KONTEXT]" not in text and "Bisheriges" not in text
    assert text.startswith("[IDENTITAET]\nDu bist Nova.")


def test_optional_block_with_content_is_kept(template: str) -> None:
    text = prompts.render(template, variant="human", name="Nova", verlauf="[1] USER: hi", text="x")
    assert "[KONTEXT]\nBisheriges Gespräch:\n[1] USER: hi" in text


def test_variant_selects_block_and_json_braces_survive(template: str) -> None:
    text = prompts.render(template, variant="character", name="N", verlauf="", text="t")
    assert "deine eigene Antwort" in text and "des Nutzers" not in text
    assert "[AUFGABE]\n" in text
    assert '{"salienz": 0.5}' in text


def test_missing_and_unknown_values_raise(template: str) -> None:
    with pytest.raises(KeyError):
        prompts.render(template, variant="human", name="N", verlauf="")
    with pytest.raises(TypeError):
        prompts.render(template, variant="human", name="N", verlauf="", text="t", typo="x")


@pytest.mark.parametrize("name", ["perception", "salience_segment", "salience_score"])
def test_shipped_templates_parse(name: str) -> None:
    assert prompts.parse_blocks(name)
    assert prompts.placeholders(name)
