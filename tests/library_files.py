"""Files for the library's tests, made in the test: a PDF with pages, a Word file with a
heading, the usual notes folder (a Markdown file, a PDF, a DOCX), and a recorder of every
open and listing below folders a test forbids (`sys.addaudithook`: it sees what the code
really touches, not what it says it touches).

One module, so the unit, memory, graph and event tests make their files the same way;
`tests/` is on the import path through its conftest."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PDF_FACT = "Die Kuendigungsfrist der Wohnung betraegt sieben Wochen zum Monatsende."
"""The fact only the notes folder's PDF holds, on its second page."""


def make_pdf(pages: Sequence[str]) -> bytes:
    """A PDF with one page per entry, each line of an entry drawn as one text line."""
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out)
    for text in pages:
        y = 800
        for line in text.splitlines():
            pdf.drawString(72, y, line)
            y -= 16
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def make_docx(heading: str, paragraphs: Sequence[str]) -> bytes:
    """A Word file: one level-1 heading, then the paragraphs."""
    import docx

    document = docx.Document()
    document.add_heading(heading, level=1)
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def notes_folder(parent: Path, name: str = "Notizen") -> Path:
    """`parent/name` with garten.md, vertrag.pdf (PDF_FACT on page 2) and rezept.docx."""
    folder = parent / name
    folder.mkdir()
    (folder / "garten.md").write_text(
        "# Garten\n\nDie Tomaten kommen im Mai ins Beet.\n\n## Kompost\n\nEinmal im Herbst.\n"
    )
    (folder / "vertrag.pdf").write_bytes(
        make_pdf(["Mietvertrag fuer die Lindenstrasse 4.", "Paragraph 9\n" + PDF_FACT])
    )
    (folder / "rezept.docx").write_bytes(
        make_docx("Apfelkuchen", ["Sechs Aepfel schaelen.", "Eine Stunde backen."])
    )
    return folder


# --- every open and listing below a forbidden folder ----------------------------------------

_FORBIDDEN: list[str] = []
_TOUCHED: list[str] = []
_AUDITED = ("open", "os.scandir", "os.listdir")


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event not in _AUDITED or not _FORBIDDEN or not args:
        return
    target = args[0]
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    if isinstance(target, os.PathLike):
        target = os.fspath(target)
    if isinstance(target, str) and any(target.startswith(f) for f in _FORBIDDEN):
        _TOUCHED.append(f"{event} {target}")


sys.addaudithook(_audit)  # once per process: this module is imported once


def forbid(folder: Path) -> None:
    """Record every open and listing below `folder` (its real path) from now on."""
    _FORBIDDEN.append(str(folder.resolve()))


def touched() -> list[str]:
    """What was opened or listed below a forbidden folder, as `"<event> <path>"` lines."""
    return list(_TOUCHED)


def forget() -> None:
    """Forbid nothing any more and forget what was touched (a fixture's teardown)."""
    _FORBIDDEN.clear()
    _TOUCHED.clear()
