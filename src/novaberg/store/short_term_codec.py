"""How a short-term memory entry looks in Redis and in Python: the hash fields, the vector
bytes (little-endian float32), the themes field and the reply shapes of the KZG scripts."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Final

import numpy as np

FIELD_EMBEDDING: Final = "embedding"
"""Hash field holding the float32 bytes."""

FIELD_PROMOTION: Final = "befoerderung_am"
"""Epoch seconds the entry was queued for promotion; makes the push happen once."""

CORRECTED_FIELD: Final = "korrigiert_am"
"""Epoch seconds the person last corrected the entry's text (absent: never corrected)."""

FIELD_THEMES_NORM: Final = "themen_norm"
"""The entry's themes already normalised by the writer, as `themes_field` builds them, so a
script can match themes without lowercasing (Lua's `string.lower` is ASCII-only). Not part of
the documented entry fields; readers pick their fields by name and never show it."""

DTYPE: Final = np.dtype("<f4")


def encode_vector(vector: Sequence[float] | np.ndarray) -> bytes:
    return np.asarray(vector, dtype=DTYPE).tobytes()


def decode_vector(raw: bytes | None) -> np.ndarray | None:
    if not raw or len(raw) % DTYPE.itemsize:
        return None
    return np.frombuffer(raw, dtype=DTYPE)


def similarity_of(cosine: float) -> float:
    """The search score (1 + cos) / 2 = 1 − cosine distance / 2."""
    return (1.0 + cosine) / 2.0


@dataclass(slots=True)
class ShortTermEntry:
    """One stored entry: its key, text fields (embedding removed) and vector."""

    key: str
    fields: dict[str, str]
    vector: np.ndarray | None = None
    ttl_ms: int | None = None


@dataclass(slots=True)
class ShortTermHit:
    """A search result: cosine to the query and the similarity (1 + cos) / 2."""

    key: str
    cosine: float
    similarity: float
    fields: dict[str, str]


@dataclass(slots=True)
class ThemeRow:
    """What reinforcement needs of a neighbour.

    From `match_themes`: `themes` is the stored `themen_norm`, `frequency` the value after
    the increment. A legacy row (entry without `themen_norm`, not incremented) has the raw
    `themen` and `frequency` None. `intake_salience`: the stored `salienz_eingang`.
    """

    key: str
    themes: str
    intake_salience: str | None
    frequency: int | None


def themes_field(normalised: Iterable[str]) -> str:
    """`themen_norm` of normalised themes: ",a,b," (sorted; "," for none).

    A token ",t," occurs in it exactly when t is one of the themes, as long as no theme
    contains a comma (the stored `themen` are split at commas, so none does)."""
    return "," + "".join(f"{theme}," for theme in sorted(set(normalised)))


def theme_tokens(wanted: Iterable[str]) -> list[str]:
    """Search tokens ",theme," of normalised themes; a theme with a comma can match no stored
    theme and is left out."""
    return [f",{theme}," for theme in set(wanted) if theme and "," not in theme]


def themes_of_field(value: str) -> list[str]:
    """The sorted themes of a `themes_field` value."""
    return [theme for theme in value.split(",") if theme]


def decode_hash(raw: Mapping[bytes, bytes] | None) -> tuple[dict[str, str], np.ndarray | None]:
    fields: dict[str, str] = {}
    vector = None
    for name_b, value in (raw or {}).items():
        name = name_b.decode("utf-8")
        if name == FIELD_EMBEDDING:
            vector = decode_vector(value)
        else:
            fields[name] = value.decode("utf-8", errors="replace")
    return fields, vector


def flat_fields(fields: Mapping[str, Any]) -> list[str | bytes]:
    args: list[str | bytes] = []
    for name, value in fields.items():
        if value is None:
            continue
        args.append(name)
        args.append(value if isinstance(value, bytes) else str(value))
    return args


def decode_flats(flats: Sequence[Sequence[bytes] | None]) -> list[dict[str, str] | None]:
    """Flat field/value replies (no embedding in them) as text fields; None stays None.

    Decoded in one go (join, decode, split: all in C); NUL is ASCII, so replacing invalid
    UTF-8 gives what decoding each value alone gives. A value holding NUL itself is rare and
    falls back to decoding value by value."""
    items = list(chain.from_iterable(flat for flat in flats if flat))
    parts = b"\0".join(items).decode("utf-8", errors="replace").split("\0")
    if len(parts) != len(items):
        parts = [item.decode("utf-8", errors="replace") for item in items]
    result: list[dict[str, str] | None] = []
    start = 0
    for flat in flats:
        if flat is None:
            result.append(None)
            continue
        end = start + len(flat)
        result.append(dict(zip(parts[start:end:2], parts[start + 1 : end : 2], strict=True)))
        start = end
    return result


def as_list(raw: bytes | str) -> list[Any]:
    """cjson encodes an empty Lua table as {}; a JSON list otherwise."""
    value = json.loads(raw)
    return value if isinstance(value, list) else []


def indices(raw: bytes | str) -> list[int]:
    return [int(i) for i in as_list(raw)]


def as_mapping(raw: Any) -> dict[bytes, bytes]:
    """HGETALL with NEVER_DECODE comes back as a dict (RESP2 callback) or a flat list."""
    if isinstance(raw, dict):
        return raw
    items = list(raw)
    return dict(zip(items[::2], items[1::2], strict=True))


def key_ms(key: str) -> int:
    try:
        return int(key.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return 0
