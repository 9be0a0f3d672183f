"""Text out of a file's bytes, by format (docs/behaviour/library.md#formats).

Every parser returns the text as Markdown-like lines — a heading as `#`…`######` + title —
split into pages where the format has pages (PDF), so one chunker (`chunking.py`) keeps
headings and page numbers for every format. A file that cannot be parsed raises
`ParseFailed` with a one-line reason; the indexer records it and goes on.

Choices: PDF through pypdf (page by page, so each passage knows its page — converters to
Markdown join the pages), DOCX through python-docx (paragraph styles give the headings);
HTML, EPUB, ODT and e-mail through the standard library (html.parser, zipfile + XML,
email): their structure is plain enough, and it keeps a converter with a large dependency
tree (markitdown pulls a file-type model and onnxruntime) out of the install.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from email import policy
from email.parser import BytesParser
from html.parser import HTMLParser
from pathlib import PurePosixPath
from typing import Final
from xml.etree import ElementTree


class ParseFailed(Exception):
    """The file could not be read as its format; the message is the reason (one line)."""


@dataclass(frozen=True, slots=True)
class Page:
    """Text of one page (`number` None: the format has no pages)."""

    number: int | None
    text: str


@dataclass(frozen=True, slots=True)
class Parsed:
    """A file's text: its pages, the parser that read it, and whether `#` lines are
    headings (not in plain text, where a `#` is just a character)."""

    pages: list[Page]
    parser: str
    headings: bool = True


MAX_UNPACKED: Final = 16
"""A member of a ZIP container (DOCX, ODT, EPUB) may unpack to at most 16× the file's size
limit: a ZIP bomb is refused before it is unpacked."""


def _decode(data: bytes) -> str:
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def parse_text(data: bytes, _limit: int) -> Parsed:
    return Parsed([Page(None, _decode(data))], "text", headings=False)


def parse_markdown(data: bytes, _limit: int) -> Parsed:
    return Parsed([Page(None, _decode(data))], "markdown")


def parse_pdf(data: bytes, _limit: int) -> Parsed:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ParseFailed("the PDF is encrypted")
        pages = [
            Page(number, page.extract_text() or "")
            for number, page in enumerate(reader.pages, start=1)
        ]
    except ParseFailed:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise ParseFailed(f"not a readable PDF ({exc})") from None
    return Parsed(pages, "pypdf")


_HEADING_STYLE = re.compile(r"^(?:heading|überschrift)\s*(\d)$", re.IGNORECASE)


def parse_docx(data: bytes, limit: int) -> Parsed:
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    _check_zip(data, limit)
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise ParseFailed(f"not a readable Word file ({exc})") from None
    lines: list[str] = []
    for paragraph in document.paragraphs:
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        text = paragraph.text.strip()
        level = _HEADING_STYLE.match(style.strip())
        if text and (level or style == "Title"):
            lines.append("#" * (int(level.group(1)) if level else 1) + " " + text)
        else:
            lines.append(text)
    for table in document.tables:
        for row in table.rows:
            lines.append(" | ".join(cell.text.strip() for cell in row.cells))
    return Parsed([Page(None, "\n".join(lines))], "python-docx")


class _HtmlText(HTMLParser):
    """Visible text of an HTML document, headings as Markdown, blocks as lines."""

    _BLOCKS: Final = frozenset(
        [
            "p",
            "div",
            "br",
            "li",
            "tr",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "section",
            "article",
            "blockquote",
            "pre",
            "dt",
            "dd",
            "title",
        ]
    )
    _HIDDEN: Final = frozenset({"script", "style", "head", "noscript", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self._current: list[str] = []
        self._hidden = 0
        self._heading = 0

    def _flush(self) -> None:
        text = " ".join("".join(self._current).split())
        if text:
            self.lines.append(("#" * self._heading + " " if self._heading else "") + text)
        self._current = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._HIDDEN:
            self._hidden += 1
        elif tag in self._BLOCKS:
            self._flush()
            if len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
                self._heading = int(tag[1])

    def handle_endtag(self, tag: str) -> None:
        if tag in self._HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in self._BLOCKS:
            self._flush()
            self._heading = 0

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self._current.append(data)

    def text(self) -> str:
        self._flush()
        return "\n".join(self.lines)


def html_text(markup: str) -> str:
    parser = _HtmlText()
    parser.feed(markup)
    parser.close()
    return parser.text()


def parse_html(data: bytes, _limit: int) -> Parsed:
    return Parsed([Page(None, html_text(_decode(data)))], "html.parser")


def _check_zip(data: bytes, limit: int) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ParseFailed("not a readable ZIP container") from None
    for info in archive.infolist():
        if info.file_size > MAX_UNPACKED * limit:
            raise ParseFailed(f"{info.filename} unpacks to {info.file_size} bytes")
    return archive


def _member(archive: zipfile.ZipFile, name: str) -> bytes:
    try:
        return archive.read(name)
    except KeyError:
        raise ParseFailed(f"{name} is missing") from None


def _xml(data: bytes) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise ParseFailed(f"broken XML ({exc})") from None


_ODF_TEXT: Final = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"


def parse_odt(data: bytes, limit: int) -> Parsed:
    root = _xml(_member(_check_zip(data, limit), "content.xml"))
    lines: list[str] = []
    for element in root.iter():
        if element.tag == _ODF_TEXT + "h":
            level = int(element.get(_ODF_TEXT + "outline-level") or "1")
            lines.append(
                "#" * min(max(level, 1), 6) + " " + " ".join("".join(element.itertext()).split())
            )
        elif element.tag == _ODF_TEXT + "p":
            lines.append(" ".join("".join(element.itertext()).split()))
    return Parsed([Page(None, "\n".join(lines))], "odt-xml")


_CONTAINER: Final = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF: Final = "{http://www.idpf.org/2007/opf}"


def parse_epub(data: bytes, limit: int) -> Parsed:
    archive = _check_zip(data, limit)
    container = _xml(_member(archive, "META-INF/container.xml"))
    rootfile = container.find(f".//{_CONTAINER}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise ParseFailed("the EPUB names no package file")
    opf_path = str(rootfile.get("full-path"))
    package = _xml(_member(archive, opf_path))
    base = posixpath.dirname(opf_path)
    items = {
        item.get("id"): item.get("href")
        for item in package.iter(f"{_OPF}item")
        if item.get("id") and item.get("href")
    }
    chapters = []
    for ref in package.iter(f"{_OPF}itemref"):
        href = items.get(ref.get("idref"))
        if href:
            name = posixpath.normpath(posixpath.join(base, href))
            chapters.append(html_text(_decode(_member(archive, name))))
    return Parsed([Page(None, "\n\n".join(chapters))], "epub-xml")


def parse_eml(data: bytes, _limit: int) -> Parsed:
    message = BytesParser(policy=policy.default).parsebytes(data)
    subject = str(message.get("subject") or "").strip()
    header = [f"# {subject}" if subject else "# (no subject)"]
    for field in ("from", "to", "date"):
        if message.get(field):
            header.append(f"{field.capitalize()}: {message.get(field)}")
    body = message.get_body(preferencelist=("plain", "html"))  # type: ignore[attr-defined]
    text = ""
    if body is not None:
        try:
            content = body.get_content()
        except (LookupError, ValueError) as exc:
            raise ParseFailed(f"unreadable message body ({exc})") from None
        text = html_text(content) if body.get_content_subtype() == "html" else str(content)
    return Parsed([Page(None, "\n".join([*header, "", text]))], "email")


Parser = Callable[[bytes, int], Parsed]

PARSERS: Final[dict[str, Parser]] = {
    ".txt": parse_text,
    ".text": parse_text,
    ".md": parse_markdown,
    ".markdown": parse_markdown,
    ".pdf": parse_pdf,
    ".docx": parse_docx,
    ".html": parse_html,
    ".htm": parse_html,
    ".odt": parse_odt,
    ".epub": parse_epub,
    ".eml": parse_eml,
}
"""The formats the library reads, by file suffix (lower case)."""


def parser_for(relative: str) -> Parser | None:
    """The parser of a file by its suffix; None: a format the library does not read."""
    return PARSERS.get(PurePosixPath(relative).suffix.lower())


def parse(relative: str, data: bytes, limit: int) -> Parsed:
    """The file's text; `ParseFailed` with the reason when it cannot be read."""
    parser = parser_for(relative)
    if parser is None:
        raise ParseFailed("a format the library does not read")
    try:
        return parser(data, limit)
    except ParseFailed:
        raise
    except Exception as exc:  # a parser's own bug on a strange file is the file's failure
        raise ParseFailed(f"{type(exc).__name__}: {exc}") from None
