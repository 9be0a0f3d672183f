"""The code's pointers into docs/behaviour resolve, the docs' links resolve, and the code
cites nothing a reader cannot open (the original spec and seed files, issue numbers, bug
ids of another tracker)."""

from __future__ import annotations

import io
import re
import tokenize
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "novaberg"
DOC_FILES = [
    ROOT / "README.md",
    ROOT / "bench" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
SOURCE_SUFFIXES = {".py", ".sql", ".txt", ".md", ".js", ".html", ".css"}

POINTER = re.compile(r"docs/behaviour/([a-z_]+\.md)#([a-z0-9-]+)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")

CITATIONS = {
    "a section sign": re.compile("§"),
    "the spec or the seeds": re.compile(r"(?i)\b(spec|seed)s?\b"),
    "an issue number": re.compile(r"(?i)\bissues?\s*#?\d+"),
    "a chat number": re.compile(r"(?i)\bchat\s+\d+"),
    "a bug id": re.compile(r"\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+){2,}\b"),
    "a plan for later issues": re.compile(r"(?i)\blater issues?\b"),
}


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    found: set[str] = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            found.add(slug(match.group(1)))
    return frozenset(found)


def source_files() -> list[Path]:
    return sorted(
        p
        for p in SRC.rglob("*")
        if p.is_file() and p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts
    )


def prose(path: Path) -> list[tuple[int, str]]:
    """(line, text) of what a reader reads as prose: comments and string literals of a
    Python file, every line of any other file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return list(enumerate(text.splitlines(), start=1))
    pieces = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.COMMENT, tokenize.STRING):
            text = token.string
            if token.type == tokenize.STRING and "f" in text.split(text[-1], 1)[0].lower():
                text = re.sub(r"\{[^{}]*\}", "", text)  # an f-string's code is not prose
            lines = text.splitlines()
            pieces += [(token.start[0] + offset, line) for offset, line in enumerate(lines)]
    return pieces


def test_slug_matches_github() -> None:
    assert slug("Supersede before release — three quick messages, one answer") == (
        "supersede-before-release--three-quick-messages-one-answer"
    )
    assert slug("memory.py") == "memorypy"
    assert slug("EI calc persist") == "ei-calc-persist"


def test_every_pointer_in_the_code_resolves() -> None:
    behaviour = ROOT / "docs" / "behaviour"
    broken = []
    pointers = 0
    for path in source_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for page, anchor in POINTER.findall(line):
                pointers += 1
                target = behaviour / page
                if not target.is_file() or anchor not in anchors(target):
                    broken.append(f"{path.relative_to(ROOT)}:{number}: {page}#{anchor}")
    assert pointers > 100, "the code should point into docs/behaviour"
    assert broken == [], "pointers into docs/behaviour that lead nowhere"


def test_every_link_in_the_docs_resolves() -> None:
    broken = []
    for doc in DOC_FILES:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto
            file_part, _, anchor = target.partition("#")
            path = (doc.parent / file_part).resolve() if file_part else doc
            if not path.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == [], "links in README, docs/ and bench/README.md that lead nowhere"


def test_the_code_cites_nothing_outside_the_repository() -> None:
    found = []
    for path in source_files():
        for number, text in prose(path):
            for what, pattern in CITATIONS.items():
                match = pattern.search(text)
                if match:
                    where = f"{path.relative_to(ROOT)}:{number}"
                    found.append(f"{where}: {what}: {match.group(0)!r}")
    assert found == [], "cite docs/behaviour instead:\n" + "\n".join(found)
