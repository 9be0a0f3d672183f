"""A parsed file cut into passages that each know where they stand
(docs/behaviour/library.md#passages).

A passage is a run of paragraphs of at most `CHUNK_CHARS` characters under one heading and
on one page: a new heading or page always starts a new passage, so a hit names its file,
its page (formats with pages) or heading path, and the lines it spans. Lines are counted in
the extracted text, from 1 on each page (a PDF) or for the whole file (every other format;
for plain text and Markdown they are the file's own lines). A paragraph longer than a
passage is cut at lines, a line longer than a passage at characters. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from novaberg.memory.library.parsers import Parsed

CHUNK_CHARS: Final = 1200
"""Characters of a passage at most: a few paragraphs, enough context for one fact and small
enough that its vector is about that fact (the embedding models read ~256 tokens)."""

HEADING_SEPARATOR: Final = " › "
"""Between the levels of a heading path ("Mietvertrag › Kündigung")."""

_HEADING = re.compile(r"^(#{1,6})\s+(\S.*?)\s*#*\s*$")


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str
    heading: str
    page: int | None
    line_from: int
    line_to: int


@dataclass(slots=True)
class _Open:
    """The passage being filled: its lines as (number, text)."""

    heading: str
    page: int | None
    lines: list[tuple[int, str]]

    def size(self) -> int:
        return sum(len(text) + 1 for _, text in self.lines)


def chunk(parsed: Parsed, limit: int = CHUNK_CHARS) -> list[Chunk]:
    """The passages of a parsed file, in reading order."""
    out: list[Chunk] = []
    stack: list[tuple[int, str]] = []
    for page in parsed.pages:
        current = _Open(_path(stack), page.number, [])
        paragraph: list[tuple[int, str]] = []
        for number, line in enumerate(page.text.splitlines(), start=1):
            found = _HEADING.match(line) if parsed.headings else None
            if found:
                _add(out, current, paragraph, limit)
                paragraph = []
                _close(out, current)
                level = len(found.group(1))
                stack = [(lvl, title) for lvl, title in stack if lvl < level]
                stack.append((level, found.group(2)))
                current = _Open(_path(stack), page.number, [])
            elif line.strip():
                paragraph.append((number, line.rstrip()))
            else:
                _add(out, current, paragraph, limit)
                paragraph = []
        _add(out, current, paragraph, limit)
        _close(out, current)
    return out


def _path(stack: list[tuple[int, str]]) -> str:
    return HEADING_SEPARATOR.join(title for _, title in stack)


def _add(out: list[Chunk], current: _Open, paragraph: list[tuple[int, str]], limit: int) -> None:
    """Put a paragraph into the open passage, closing it first when the paragraph would
    overflow it; a paragraph larger than a passage is cut into several."""
    if not paragraph:
        return
    size = sum(len(text) + 1 for _, text in paragraph)
    if current.lines and current.size() + size > limit:
        _close(out, current)
    for number, piece in _pieces(paragraph, limit):
        if current.lines and current.size() + len(piece) + 1 > limit:
            _close(out, current)
        current.lines.append((number, piece))


def _pieces(paragraph: list[tuple[int, str]], limit: int) -> Iterator[tuple[int, str]]:
    for number, text in paragraph:
        for start in range(0, len(text), limit):
            yield number, text[start : start + limit]


def _close(out: list[Chunk], current: _Open) -> None:
    if current.lines:
        out.append(
            Chunk(
                "\n".join(text for _, text in current.lines),
                current.heading,
                current.page,
                current.lines[0][0],
                current.lines[-1][0],
            )
        )
    current.lines = []
