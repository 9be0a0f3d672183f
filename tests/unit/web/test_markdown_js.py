"""The page's markdown renderer (web/markdown.js), run by node: whatever a model writes,
markup comes only from the recognised markdown, never from the text itself."""

from __future__ import annotations

import json

import pytest

from web_module import run_module


def render(text: str) -> str:
    return run_module("markdown.js", f"m.renderMarkdown({json.dumps(text)})")


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("Hallo **du** und *so*", "<p>Hallo <strong>du</strong> und <em>so</em></p>"),
        ("- eins\n- `x<y`", "<ul><li>eins</li><li><code>x&lt;y</code></li></ul>"),
        ("1. a\n2. b", "<ol><li>a</li><li>b</li></ol>"),
        ("```\n<b>fett</b>\n```", "<pre><code>&lt;b&gt;fett&lt;/b&gt;</code></pre>"),
        ("# Titel", "<h4>Titel</h4>"),
        ("eins\nzwei\n\ndrei", "<p>eins<br>zwei</p><p>drei</p>"),
        (
            "[Karte](https://example.org/a?b=1)",
            '<p><a href="https://example.org/a?b=1" rel="noopener noreferrer" '
            'target="_blank">Karte</a></p>',
        ),
        ("2*3*4", "<p>2*3*4</p>"),
    ],
)
def test_markdown(text: str, html: str) -> None:
    assert render(text) == html


def test_text_never_becomes_markup() -> None:
    html = render('<script>alert(1)</script> <img src=x onerror="y"> [x](javascript:alert(1))')
    assert "<script" not in html and "<img" not in html and "<a" not in html
    assert "&lt;script&gt;" in html and "&quot;y&quot;" in html
