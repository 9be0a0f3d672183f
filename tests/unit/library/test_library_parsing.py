"""Each format the library reads gives its text with headings and pages, and the chunker
turns it into passages that name their heading path, page and line range. A file that
cannot be parsed raises ParseFailed with a reason, never anything else."""

from __future__ import annotations

import io
import itertools
import zipfile

import pytest

from library_files import make_docx, make_pdf
from novaberg.memory.library.chunking import chunk
from novaberg.memory.library.parsers import Page, Parsed, ParseFailed, parse

LIMIT = 1024 * 1024


def test_markdown_keeps_heading_paths_and_file_lines() -> None:
    text = "# Mietvertrag\n\nIntro.\n\n## Kündigung\n\nDrei Monate Frist.\nSchriftlich.\n"
    chunks = chunk(parse("vertrag.md", text.encode(), LIMIT))
    assert [(c.heading, c.line_from, c.line_to, c.page) for c in chunks] == [
        ("Mietvertrag", 3, 3, None),
        ("Mietvertrag › Kündigung", 7, 8, None),
    ]
    assert chunks[1].text == "Drei Monate Frist.\nSchriftlich."


def test_plain_text_has_no_headings() -> None:
    chunks = chunk(parse("a.txt", b"# not a heading\nline two\n", LIMIT))
    assert [(c.heading, c.line_from, c.line_to) for c in chunks] == [("", 1, 2)]


def test_pdf_passages_know_their_page() -> None:
    data = make_pdf(["Erste Seite ohne Fakt.", "Der Schluessel liegt unter dem Blumentopf."])
    parsed = parse("doc.pdf", data, LIMIT)
    assert parsed.parser == "pypdf"
    chunks = chunk(parsed)
    assert [(c.page, c.line_from) for c in chunks] == [(1, 1), (2, 1)]
    assert "Blumentopf" in chunks[1].text


def test_docx_headings_come_from_paragraph_styles() -> None:
    parsed = parse("brief.docx", make_docx("Rezept", ["Zwei Eier.", "Mehl."]), LIMIT)
    chunks = chunk(parsed)
    assert [(c.heading, c.text) for c in chunks] == [("Rezept", "Zwei Eier.\nMehl.")]


def test_html_headings_and_hidden_text() -> None:
    html = b"<html><head><title>t</title><script>x=1</script></head><body><h1>Manual</h1><p>Press <b>reset</b>.</p><h2>Care</h2><p>Dry it.</p></body></html>"
    chunks = chunk(parse("m.html", html, LIMIT))
    assert [(c.heading, c.text) for c in chunks] == [
        ("Manual", "Press reset."),
        ("Manual › Care", "Dry it."),
    ]


def _zip(members: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return out.getvalue()


def test_odt_headings_by_outline_level() -> None:
    content = (
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
        '<text:h text:outline-level="1">Garten</text:h><text:p>Tomaten im Mai.</text:p>'
        "</office:text></office:body></office:document-content>"
    )
    chunks = chunk(parse("g.odt", _zip({"content.xml": content}), LIMIT))
    assert [(c.heading, c.text) for c in chunks] == [("Garten", "Tomaten im Mai.")]


def test_epub_chapters_in_spine_order() -> None:
    container = (
        '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/book.opf"/></rootfiles></container>'
    )
    opf = (
        '<package xmlns="http://www.idpf.org/2007/opf"><manifest>'
        '<item id="b" href="b.xhtml"/><item id="a" href="a.xhtml"/></manifest>'
        '<spine><itemref idref="a"/><itemref idref="b"/></spine></package>'
    )
    data = _zip(
        {
            "META-INF/container.xml": container,
            "OEBPS/book.opf": opf,
            "OEBPS/a.xhtml": "<html><body><h1>One</h1><p>First.</p></body></html>",
            "OEBPS/b.xhtml": "<html><body><h1>Two</h1><p>Second.</p></body></html>",
        }
    )
    chunks = chunk(parse("book.epub", data, LIMIT))
    assert [(c.heading, c.text) for c in chunks] == [("One", "First."), ("Two", "Second.")]


def test_eml_subject_is_the_heading() -> None:
    mail = b"Subject: Vertrag\r\nFrom: a@example.org\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nDie Frist ist drei Monate.\r\n"
    chunks = chunk(parse("m.eml", mail, LIMIT))
    assert chunks[0].heading == "Vertrag"
    assert "Die Frist ist drei Monate." in chunks[0].text


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("broken.pdf", b"%PDF-1.4 this is not a pdf"),
        ("broken.docx", b"not a zip"),
        ("broken.odt", _zip({"other.xml": "<x/>"})),
        ("broken.epub", _zip({"META-INF/container.xml": "<unclosed"})),
        ("program.exe", b"MZ"),
    ],
)
def test_an_unreadable_file_fails_with_a_reason(name: str, data: bytes) -> None:
    with pytest.raises(ParseFailed) as failed:
        parse(name, data, LIMIT)
    assert str(failed.value)


def test_a_zip_bomb_member_is_refused_before_unpacking() -> None:
    data = _zip({"content.xml": "<a>" + "x" * 5000 + "</a>"})
    with pytest.raises(ParseFailed, match="unpacks to"):
        parse("bomb.odt", data, 100)


def test_long_paragraphs_are_cut_within_the_limit() -> None:
    text = "\n".join(f"Zeile {i} " + "wort " * 20 for i in range(40))
    chunks = chunk(Parsed([Page(None, text)], "t"), 500)
    assert all(len(c.text) <= 500 for c in chunks)
    assert chunks[0].line_from == 1 and chunks[-1].line_to == 40
    assert all(a.line_to < b.line_from for a, b in itertools.pairwise(chunks))
