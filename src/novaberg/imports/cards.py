"""Reading a character card: V1, V2 (tagged `chara_card_v2`) or V3 (`chara_card_v3`), as JSON
or embedded in a PNG.

A PNG carries the card base64-encoded in a `tEXt` chunk: `ccv3` (V3) or `chara` (V2 and
older); when both are present `ccv3` wins. V2/V3 keep the fields in `data`; V1 has them at
the top level. What Novaberg uses: name, description, personality, scenario, first message
and alternate greetings, example dialogue, system prompt, and the lorebook
(`character_book.entries`: keys and content, disabled entries left out). Anything else that is not a card raises `CardError`
with one line (docs/behaviour/memory.md#imports); a card over a limit (imports/limits.py:
file size, a field's length, lorebook entries) raises `TooLarge`, JSON nested too deep
`TooDeep` (bounded_json.py), each before the part concerned is stored or walked.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import struct
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from novaberg import bounded_json
from novaberg.imports.limits import DEFAULT_LIMITS, ImportLimits, TooLarge, over_limit

PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
CARD_CHUNKS: Final = ("ccv3", "chara")
"""tEXt keywords that hold a card, preferred first."""

SPEC_V3: Final = "chara_card_v3"
"""The version tag of a V3 card (a V2 card says chara_card_v2; both nest their fields in
`data`)."""

MAX_ID_CHARS: Final = 64
"""A character id is what the intake accepts: 1–64 of [A-Za-z0-9_.-]."""
ID_PATTERN: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")

_TRANSLITERATE: Final = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})


class CardError(ValueError):
    """Not a character card (one line: why)."""


@dataclass(frozen=True, slots=True)
class LoreEntry:
    """One lorebook entry: its keys (trigger words) and content; `ident`: the card's id for
    it, else its position (stable across imports of the same card)."""

    ident: str
    keys: tuple[str, ...]
    content: str
    name: str = ""


@dataclass(frozen=True)
class Card:
    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_message: str = ""
    alternate_greetings: tuple[str, ...] = ()
    """V2/V3 `alternate_greetings`: other openings the person may pick instead of the first."""
    example_dialogue: str = ""
    system_prompt: str = ""
    lore: tuple[LoreEntry, ...] = ()
    spec: str = "v1"
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    image: bytes | None = field(default=None, compare=False, repr=False)
    """The card's picture (a PNG without the card chunks); None for a JSON card."""
    digest: str = field(default="", compare=False)
    """SHA-256 of the card's JSON (keys sorted): the same card, the same digest. Hashed
    where the card is parsed (a worker thread for a request), not where it is stored."""


def card_digest(raw: Mapping[str, Any]) -> str:
    canonical = json.dumps(raw, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def character_id_for(name: str) -> str:
    """A character id from a name: lowercase ASCII letters, digits and - (umlauts spelt
    out, other letters reduced to their base letter)."""
    lowered = name.strip().lower().translate(_TRANSLITERATE)
    ascii_name = unicodedata.normalize("NFKD", lowered).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9_.]+", "-", ascii_name).strip("-.")
    return slug[:MAX_ID_CHARS].rstrip("-.")


def read_card(data: bytes, limits: ImportLimits = DEFAULT_LIMITS) -> Card:
    """The card in a PNG or JSON file. CPU work in proportion to the file: call it off the
    event loop."""
    limits.check_card_size(len(data))
    if data.startswith(PNG_SIGNATURE):
        card = parse_card(_png_card_json(data), limits)
        return replace(card, image=png_without_card(data))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CardError("neither a PNG nor UTF-8 JSON") from None
    try:
        obj = bounded_json.loads(text)  # TooDeep passes up: not broken, refused as deep
    except json.JSONDecodeError as exc:
        raise CardError(f"broken JSON at line {exc.lineno}: {exc.msg}") from None
    return parse_card(obj, limits)


def _png_chunks(data: bytes) -> dict[str, bytes]:
    """tEXt chunks of a PNG by keyword (the first of each keyword)."""
    chunks: dict[str, bytes] = {}
    offset = len(PNG_SIGNATURE)
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        start, end = offset + 8, offset + 8 + length
        if end + 4 > len(data):
            raise CardError("the PNG is truncated")
        if kind == b"tEXt":
            keyword, _, value = data[start:end].partition(b"\x00")
            chunks.setdefault(keyword.decode("latin-1"), value)
        if kind == b"IEND":
            break
        offset = end + 4  # skip the CRC
    return chunks


def png_without_card(data: bytes) -> bytes:
    """The PNG with its card text chunks (`ccv3`, `chara`) left out: the picture alone,
    every other chunk as it was (each chunk carries its own CRC)."""
    kept = [data[: len(PNG_SIGNATURE)]]
    offset = len(PNG_SIGNATURE)
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        end = offset + 8 + length + 4
        if end > len(data):
            raise CardError("the PNG is truncated")
        keyword = data[offset + 8 : offset + 8 + length].partition(b"\x00")[0]
        if not (kind == b"tEXt" and keyword.decode("latin-1") in CARD_CHUNKS):
            kept.append(data[offset:end])
        offset = end
        if kind == b"IEND":
            break
    return b"".join(kept)


def _png_card_json(data: bytes) -> Any:
    chunks = _png_chunks(data)
    for keyword in CARD_CHUNKS:
        if keyword in chunks:
            try:
                decoded = base64.b64decode(chunks[keyword], validate=False)
                return bounded_json.loads(decoded.decode("utf-8"))
            except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise CardError(f"the PNG's {keyword!r} chunk is not base64 JSON ({exc})") from None
    raise CardError("a PNG without a character card (no 'ccv3' or 'chara' text chunk)")


def _string(obj: Mapping[str, Any], name: str) -> str:
    value = obj.get(name)
    return value.strip() if isinstance(value, str) else ""


def _field(obj: Mapping[str, Any], name: str, limits: ImportLimits, where: str = "") -> str:
    """A text field within `NOVABERG_MAX_CARD_FIELD_CHARS`, else `TooLarge`."""
    value = _string(obj, name)
    if len(value) > limits.card_field_chars:
        what = f"the card's {where}" if where else f"the card's field {name!r}"
        raise TooLarge(
            over_limit(
                what, len(value), limits.card_field_chars, "max_card_field_chars", "characters"
            )
        )
    return value


def _lore(data: Mapping[str, Any], limits: ImportLimits) -> tuple[LoreEntry, ...]:
    book = data.get("character_book")
    entries = book.get("entries") if isinstance(book, Mapping) else None
    if not isinstance(entries, list):
        return ()
    if len(entries) > limits.lore_entries:
        raise TooLarge(
            over_limit(
                "the card's lorebook",
                len(entries),
                limits.lore_entries,
                "max_lore_entries",
                "entries",
            )
        )
    lore: list[LoreEntry] = []
    for position, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or entry.get("enabled") is False:
            continue
        content = _field(entry, "content", limits, f"lorebook entry {position + 1}")
        if not content:
            continue
        raw_keys = entry.get("keys")
        keys = (
            tuple(k.strip() for k in raw_keys if isinstance(k, str) and k.strip())
            if isinstance(raw_keys, list)
            else ()
        )
        ident = entry.get("id")
        lore.append(
            LoreEntry(
                str(ident) if isinstance(ident, int | str) and str(ident) else str(position),
                keys,
                content,
                _string(entry, "name") or _string(entry, "comment"),
            )
        )
    return tuple(lore)


MAX_ALTERNATE_GREETINGS: Final = 32
"""More are not stored: nobody browses further, and each one is up to a field's length."""


def _alternate_greetings(data: Mapping[str, Any], limits: ImportLimits) -> tuple[str, ...]:
    """The card's non-empty alternate greetings, each within a field's limit, the first
    `MAX_ALTERNATE_GREETINGS` of them (anything that is no list of strings: none)."""
    raw = data.get("alternate_greetings")
    if not isinstance(raw, list):
        return ()
    greetings: list[str] = []
    for position, value in enumerate(raw):
        if len(greetings) == MAX_ALTERNATE_GREETINGS:
            break
        if not isinstance(value, str):
            continue
        text = _field({"g": value}, "g", limits, f"alternate greeting {position + 1}")
        if text:
            greetings.append(text)
    return tuple(greetings)


def _storable(value: Any) -> bool:
    """Every string in it is text PostgreSQL can store: no NUL, no unpaired surrogate."""
    return all(
        "\x00" not in text and bounded_json.is_utf8(text) for text in bounded_json.strings(value)
    )


def parse_card(obj: Any, limits: ImportLimits = DEFAULT_LIMITS) -> Card:
    """A card from its JSON object (V1 flat, V2/V3 with `data`), nested no deeper than
    `bounded_json.MAX_DEPTH` (what `read_card` parses is)."""
    if not isinstance(obj, Mapping):
        raise CardError("not a character card: the JSON is not an object")
    if not _storable(obj):
        raise CardError("the card holds text that is no valid UTF-8 (NUL or a lone surrogate)")
    nested = obj.get("data")
    if isinstance(nested, Mapping):  # V2 and V3 keep every field in `data`
        data = nested
        version = "v3" if SPEC_V3 in obj.values() else "v2"
    elif "name" in obj and any(k in obj for k in ("description", "first_mes", "personality")):
        data, version = obj, "v1"
    else:
        raise CardError("not a character card (no 'data' object, and no V1 name and description)")
    name = _field(data, "name", limits)
    if not name:
        raise CardError("the card has no name")
    return Card(
        name=name,
        description=_field(data, "description", limits),
        personality=_field(data, "personality", limits),
        scenario=_field(data, "scenario", limits),
        first_message=_field(data, "first_mes", limits),
        alternate_greetings=_alternate_greetings(data, limits),
        example_dialogue=_field(data, "mes_example", limits),
        system_prompt=_field(data, "system_prompt", limits),
        lore=_lore(data, limits),
        spec=version,
        raw=dict(obj),
        digest=card_digest(obj),
    )
