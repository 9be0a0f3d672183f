"""What a hybrid search asks for and returns: layers, methods, options, hits and the
sources a hit rests on (docs/behaviour/memory.md#hybrid-search). The names of layers,
methods and signals are wire values: `--json` and the search endpoint print them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any, Final

from novaberg.memory.context import SOURCE_LONG_TERM, SOURCE_SHORT_TERM
from novaberg.memory.time_expressions.windows import TimeWindow

LAYER_ARCHIVE: Final = "archiv"
LAYER_SHORT_TERM: Final = SOURCE_SHORT_TERM
LAYER_LONG_TERM: Final = SOURCE_LONG_TERM
LAYER_CARD: Final = "karte"
LAYER_LIBRARY: Final = "library"
"""`layer` of hits and sources (a card is only ever a source: of a lore node; `library`:
a passage of a file in one of the person's approved folders, docs/behaviour/library.md)."""
ALL_LAYERS: Final = frozenset({LAYER_ARCHIVE, LAYER_SHORT_TERM, LAYER_LONG_TERM, LAYER_LIBRARY})

METHOD_VECTOR: Final = "vektor"
METHOD_CONTEXT: Final = "kontext"
METHOD_LEXICAL: Final = "lexikalisch"
METHOD_TRIGRAM: Final = "trigramm"
METHOD_WINDOW: Final = "zeitraum"
METHOD_SPEAKER: Final = "sprecher"
"""What a search may use (`signals` of a hit name the lists that found it). `kontext`: the
second view of archived turns, for vectors and words alike. The two vector views of an
archived turn make one list (its better cosine; the signal names the view that won); the
context view of the words adds each matched turn's successor to the words' list at half
its score (store/archive.py, `CONTEXT_WORD_SHARE`).
`sprecher`: when the query names someone who spoke in an imported chat ("What did Lena say
about …"), that person's archived turns ranked by the query's words (a list of their own:
the name's word alone would give every turn of hers one vote, her turn on the topic none
more). `zeitraum`: when the query names a time and the lists found fewer hits than asked, the
window's newest turns fill up the result."""
SIGNAL_VECTOR_CONTEXT: Final = "vektor_kontext"
"""The signal of an archived turn whose better cosine came from its context view."""
SIGNAL_LATEST: Final = "aktuell"
"""The signal of an archived turn that moved ahead of an older statement of the same fact
(memory/search/supersession.py): (the rank it had, the two statements' cosine)."""
ALL_METHODS: Final = frozenset(
    {METHOD_VECTOR, METHOD_CONTEXT, METHOD_LEXICAL, METHOD_TRIGRAM, METHOD_WINDOW, METHOD_SPEAKER}
)

CARD_KEY_PREFIX: Final = "karte:"
"""Source-key prefix of long-term nodes made from a character card's lorebook."""


@dataclass(frozen=True, slots=True)
class Source:
    """One thing a hit rests on."""

    layer: str
    id: str
    turn_id: str | None = None
    message_ids: tuple[str, ...] = ()
    source_id: str | None = None
    speaker: str | None = None
    time: datetime | None = None
    speaker_name: str | None = None
    """The speaker's name where an imported chat gave one ("Lena")."""

    def as_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "id": self.id,
            "turn_id": self.turn_id,
            "nachrichten_ids": list(self.message_ids),
            "source_id": self.source_id,
            "speaker": self.speaker,
            "speaker_name": self.speaker_name,
            "time": self.time.isoformat() if self.time else None,
        }


@dataclass(frozen=True, slots=True)
class LibrarySource(Source):
    """Where a library passage stands: the file (absolute), its page (None: the format has
    no pages), heading path and the lines it spans. A `Source` so every consumer of hits
    reads it (it has no turn); its JSON names file, page, heading and lines instead."""

    file: str = ""
    page: int | None = None
    heading: str = ""
    line_from: int = 0
    line_to: int = 0

    def label(self) -> str:
        """ "Mietvertrag.pdf, S. 2, Z. 1–4" in the shape a person cites it."""
        parts = [PurePosixPath(self.file).name]
        if self.page is not None:
            parts.append(f"S. {self.page}")
        if self.heading:
            parts.append(self.heading)
        parts.append(f"Z. {self.line_from}–{self.line_to}")
        return ", ".join(parts)

    def as_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "id": self.id,
            "file": self.file,
            "page": self.page,
            "heading": self.heading,
            "lines": [self.line_from, self.line_to],
        }


@dataclass(slots=True)
class MemoryHit:
    """One fused result: its layer and id there, fused score, text, time and provenance;
    `signals`: per list it was found in, (rank, score) there."""

    layer: str
    id: str
    score: float
    text: str
    time: datetime | None
    sources: list[Source] = field(default_factory=list)
    signals: dict[str, tuple[int, float]] = field(default_factory=dict)
    speaker: str | None = None
    speaker_name: str | None = None

    def as_json(self, rank: int) -> dict[str, Any]:
        """The object `--json` prints and the search endpoint returns."""
        return {
            "rank": rank,
            "layer": self.layer,
            "id": self.id,
            "score": round(self.score, 6),
            "text": self.text,
            "time": self.time.isoformat() if self.time else None,
            "speaker": self.speaker,
            "speaker_name": self.speaker_name,
            "sources": [source.as_json() for source in self.sources],
            "signals": {
                name: {"rank": r, "score": round(s, 6)} for name, (r, s) in self.signals.items()
            },
        }

    def best_cosine(self) -> float | None:
        """The highest cosine a vector list gave it (None: found by words only)."""
        values = [
            s for n, (_, s) in self.signals.items() if n in (METHOD_VECTOR, SIGNAL_VECTOR_CONTEXT)
        ]
        return max(values) if values else None

    def found_by_words(self) -> bool:
        return any(name in (METHOD_LEXICAL, METHOD_TRIGRAM) for name in self.signals)


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """What to search. `before`/`exclude_turn`: leave out archive rows said at or after
    that time / of that turn (the enricher: what the session already holds)."""

    limit: int = 10
    layers: frozenset[str] = ALL_LAYERS
    methods: frozenset[str] = ALL_METHODS
    include_inactive: bool = False
    narrow_by_time: bool = True
    latest_first: bool = True
    """False: a changed fact's statements keep the fusion's order (memory/search/
    supersession.py; the recall bench compares both)."""
    before: datetime | None = None
    exclude_turn: str | None = None
    skip: frozenset[tuple[str, str]] = frozenset()
    """(layer, method) lists to leave out (the enricher: the long-term vectors, which its
    spreading read covers)."""


@dataclass(slots=True)
class SearchResult:
    hits: list[MemoryHit]
    window: TimeWindow | None
    embedded: bool
    """False when the query could not be embedded (then only words were searched)."""
