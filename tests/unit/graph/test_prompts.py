"""The [BLOCKNAME] prompt renderer."""

from __future__ import annotations

import re
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
    _clear_caches()
    yield "probe"
    _clear_caches()


def _clear_caches() -> None:
    for cached in (
        prompts.load_prompt,
        prompts.parse_blocks,
        prompts.placeholders,
    ):
        cached.cache_clear()


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


def _reference_render(name: str, variant: str | None, values: dict[str, str | None]) -> str:
    """The renderer's rules applied the plain way: a regex substitution per block."""
    texts = {key: "" if value is None else str(value) for key, value in values.items()}
    parts: list[str] = []
    for block in prompts.parse_blocks(name):
        if block.variant is not None and block.variant != variant:
            continue
        if block.optional and all(not texts[ph].strip() for ph in block.placeholders):
            continue
        body = re.sub(r"\{([a-z_][a-z0-9_]*)\}", lambda m: texts[m.group(1)], block.body)
        body = body.strip("\n")
        parts.append(f"[{block.name}]\n{body}" if block.name else body)
    return "\n\n".join(part.strip() for part in parts if part.strip()).strip()


SHIPPED = sorted(path.stem for path in prompts.PROMPT_DIR.glob("*.txt"))
VALUE_KINDS = {
    "filled": lambda ph: f"  Wert für {ph} mit {{klammern}} und \\1 \n",
    "empty": lambda ph: "",
    "blank": lambda ph: " \n ",
    "none": lambda ph: None,
}


@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("kind", sorted(VALUE_KINDS))
def test_shipped_templates_render_as_the_plain_rules_say(name: str, kind: str) -> None:
    """Every shipped template, every variant it has, filled, empty, blank or None."""
    variants = {None} | {block.variant for block in prompts.parse_blocks(name)}
    values = {ph: VALUE_KINDS[kind](ph) for ph in prompts.placeholders(name)}
    for variant in variants:
        expected = _reference_render(name, variant, values)
        assert prompts.render(name, variant=variant, **values) == expected
        assert prompts.render(name, variant=variant, **values) == expected  # cached plan
