"""The page's word catalogues (web/lang_de.js, lang_en.js): both hold the same keys, sorted,
with the same {placeholders}; every key the page names — `data-i18n*` attributes in
index.html, key strings in any web/*.js — exists; the stage lines and failed-turn sentences
cover every node and reason code the server sends, German word for word as the server says
it. Protects every engineer's additions: a key used but never written fails here, not as a
bare key on somebody's screen (docs/behaviour/web.md#language)."""

from __future__ import annotations

import json
import re

import pytest

from novaberg.api.error_sentences import FAILURE_FALLBACK, FAILURES, SENTENCES, SENTENCES_EN
from novaberg.events.model import MAX_PROMPT_BYTES, STAGE_LABELS
from web_module import WEB, run_module

PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _load(name: str) -> tuple[dict[str, str], list[str]]:
    """The catalogue as node reads it, and its keys in file order (duplicates kept)."""
    loaded = json.loads(run_module(name, "JSON.stringify(m.default)"))
    text = (WEB / name).read_text(encoding="utf-8")
    order = re.findall(r'^\s*"([^"]+)":', text, re.M)
    return loaded, order


@pytest.fixture(scope="module")
def catalogues() -> dict[str, dict[str, str]]:
    found = {}
    for lang in ("de", "en"):
        words, order = _load(f"lang_{lang}.js")
        assert len(order) == len(set(order)), f"lang_{lang}.js names a key twice"
        assert order == sorted(order), f"lang_{lang}.js is not sorted"
        assert set(order) == set(words)
        found[lang] = words
    return found


def test_both_languages_have_the_same_keys_and_placeholders(
    catalogues: dict[str, dict[str, str]],
) -> None:
    de, en = catalogues["de"], catalogues["en"]
    assert sorted(set(de) - set(en)) == [], "missing in lang_en.js"
    assert sorted(set(en) - set(de)) == [], "missing in lang_de.js"
    for key in de:
        assert set(PLACEHOLDER.findall(de[key])) == set(PLACEHOLDER.findall(en[key])), key
        assert en[key].strip(), key


def _used_keys(areas: set[str]) -> dict[str, set[str]]:
    """Every catalogue key the page names, by the file that names it: the values of
    data-i18n attributes, and any JS string literal of the shape area.name whose area is a
    catalogue's (keys built at run time, `stage.${node}`, are checked with has())."""
    used: dict[str, set[str]] = {}
    html = (WEB / "index.html").read_text(encoding="utf-8")
    used["index.html"] = set(re.findall(r'data-i18n(?:-[a-z-]+)?="([^"]+)"', html)) - {"{}"}
    literal = re.compile(r"""["'`]([a-z]+(?:\.[A-Za-z0-9_]+)+)["'`]""")
    for script in sorted(WEB.glob("*.js")):
        if script.name.startswith("lang_"):
            continue
        text = script.read_text(encoding="utf-8")
        keys = {k for k in literal.findall(text) if k.split(".", 1)[0] in areas}
        keys -= {k for k in keys if k.endswith((".js", ".json", ".png", ".svg", ".css"))}
        used[script.name] = keys
    return used


def test_every_key_the_page_names_exists(catalogues: dict[str, dict[str, str]]) -> None:
    de = catalogues["de"]
    areas = {key.split(".", 1)[0] for key in de}
    used = _used_keys(areas)
    assert "composer.tooLong" in used["composer.js"]  # the scan sees the page's keys
    assert "settings.language" in used["index.html"]
    # a literal that is the stem of a family of keys (`tasks.type` + `.${typ}`) is one too
    stems = {key.rsplit(".", 1)[0] for key in de}
    missing = {name: sorted(keys - set(de) - stems) for name, keys in used.items()}
    assert {name: keys for name, keys in missing.items() if keys} == {}


def test_every_stage_line_is_in_both_languages(catalogues: dict[str, dict[str, str]]) -> None:
    for node, label in STAGE_LABELS.items():
        assert catalogues["de"][f"stage.{node}"] == label, node
        assert catalogues["en"][f"stage.{node}"] != label, node


def test_failed_turn_sentences_match_the_servers(catalogues: dict[str, dict[str, str]]) -> None:
    for code, sentence in FAILURES.items():
        assert catalogues["de"][f"errors.{code}"] == sentence, code
        assert catalogues["en"][f"errors.{code}"].endswith("."), code
    assert catalogues["de"]["errors.unknown"] == FAILURE_FALLBACK


def test_the_box_refuses_with_the_servers_sentence(catalogues: dict[str, dict[str, str]]) -> None:
    """The input box refuses an over-long message itself, with the sentence the server would
    give for `text_zu_lang`, in either language (numbers as the UI locale writes them)."""
    kib = str(MAX_PROMPT_BYTES // 1024)
    for lang, table, limit in (
        ("de", SENTENCES, f"{MAX_PROMPT_BYTES:,}".replace(",", ".")),
        ("en", SENTENCES_EN, f"{MAX_PROMPT_BYTES:,}"),
    ):
        text = catalogues[lang]["composer.tooLong"]
        assert text.replace("{kib}", kib).replace("{limit}", limit) == table["text_zu_lang"]
