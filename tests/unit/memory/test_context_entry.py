"""`ContextEntry.as_dict` gives exactly what `dataclasses.asdict` gives, under the graph
state's names (memory/context.py)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import NamedTuple

import numpy as np

from novaberg.memory.context import ContextEntry


@dataclass
class Source:
    turn_id: str
    tags: list[str]


class Span(NamedTuple):
    start: int
    source: Source


def entry() -> ContextEntry:
    return ContextEntry(
        source="lzg",
        subtype="kontext",
        text="Lena wohnt in Hamburg",
        weight=0.4,
        meta={
            "knoten_id": 7,
            "similarity": np.float32(0.81),
            "themen": ["familie", "hamburg"],
            "pfad": (1, [2, 3]),
            "nested": {"zeit": datetime(2026, 3, 1, tzinfo=UTC), "leer": None, "ok": True},
            "quelle": Source("t1", ["a"]),
            "spanne": Span(3, Source("t2", [])),
            "geordnet": OrderedDict(x=[Source("t3", ["b"])]),
        },
    )


STATE_NAMES = {"source": "quelle", "subtype": "subtyp", "text": "inhalt", "weight": "gewicht"}


def test_as_dict_equals_dataclasses_asdict() -> None:
    original = entry()
    result = original.as_dict()
    assert result == {STATE_NAMES.get(k, k): v for k, v in asdict(original).items()}
    assert list(result) == ["quelle", "subtyp", "inhalt", "gewicht", "meta"]
    assert type(result["meta"]["pfad"]) is tuple
    assert result["meta"]["quelle"] == {"turn_id": "t1", "tags": ["a"]}


def test_as_dict_copies_meta_deeply() -> None:
    original = entry()
    result = original.as_dict()
    result["meta"]["themen"].append("neu")
    result["meta"]["pfad"][1].append(4)
    result["meta"]["nested"]["leer"] = "gefüllt"
    assert original.meta["themen"] == ["familie", "hamburg"]
    assert original.meta["pfad"] == (1, [2, 3])
    assert original.meta["nested"]["leer"] is None
