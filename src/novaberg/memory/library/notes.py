"""A turn's notes from the library (wire `aufzeichnungen`): the few passages of the
person's approved folders that bear on what was just said, each with where it stands, for
the composer's `[AUFZEICHNUNGEN]` block (docs/behaviour/library.md#in-a-turn).

Only passages with evidence enter a turn: a word of the stimulus *and* a vector near
enough, or a vector very near alone (words alone when the stimulus could not be embedded).
The words are OR-ed, so one common word would otherwise bring a file into every turn of a
person with a library, and the prompt would grow on plain messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.memory.library.search import LibraryHit, search_library
from novaberg.memory.search.results import METHOD_LEXICAL, METHOD_VECTOR

NOTES_LIMIT: Final = 3
"""Passages a turn gets at most (the composer's block budget is ~1 200 characters)."""

NOTE_CHARS: Final = 400
"""A passage's text in the block is cut to this many characters."""

WORDS_MIN_COSINE: Final = 0.3
"""A passage that shares a word with the stimulus needs at least this cosine as well."""

VECTOR_ONLY_MIN_COSINE: Final = 0.5
"""A passage found by its vector alone needs this cosine (the enricher's archive floor)."""


@dataclass(frozen=True, slots=True)
class LibraryNote:
    """One passage for the composer: its text and where it stands."""

    file: str
    page: int | None
    heading: str
    lines: tuple[int, int]
    label: str
    """ "vertrag.pdf, S. 2, Z. 1–2": how the answer cites it."""
    text: str
    score: float

    @classmethod
    def of(cls, hit: LibraryHit) -> LibraryNote:
        source = hit.source
        flat = " ".join(hit.text.split())
        text = flat if len(flat) <= NOTE_CHARS else flat[: NOTE_CHARS - 1] + "…"
        lines = (source.line_from, source.line_to)
        return cls(source.file, source.page, source.heading, lines, source.label(), text, hit.score)

    def as_state(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "page": self.page,
            "heading": self.heading,
            "lines": list(self.lines),
            "label": self.label,
            "text": self.text,
            "score": round(self.score, 6),
        }


def has_evidence(hit: LibraryHit, embedded: bool) -> bool:
    """Whether a passage bears on the stimulus enough to enter the turn (module docstring)."""
    cosine = hit.signals[METHOD_VECTOR][1] if METHOD_VECTOR in hit.signals else None
    if METHOD_LEXICAL in hit.signals:
        return not embedded or (cosine is not None and cosine >= WORDS_MIN_COSINE)
    return cosine is not None and cosine >= VECTOR_ONLY_MIN_COSINE


async def library_notes(
    pool: AsyncConnectionPool,
    model: LLM,
    user_id: str,
    text: str,
    vector: list[float] | None,
) -> list[LibraryNote]:
    """The passages of `user_id`'s library with evidence for `text` (and its embedding
    `vector`, None: not embedded), best first. A person without a library costs one count;
    errors of the database or the model propagate (the enricher reports them)."""
    if not text.strip():
        return []
    query_vector = np.asarray(vector, dtype=np.float32) if vector is not None else None
    hits = await search_library(
        pool, model, user_id, text, NOTES_LIMIT * 2, vector=query_vector, embed=False
    )
    kept = [hit for hit in hits if has_evidence(hit, query_vector is not None)]
    return [LibraryNote.of(hit) for hit in kept[:NOTES_LIMIT]]
