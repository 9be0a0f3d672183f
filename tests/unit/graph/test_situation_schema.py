"""The situation reading's schema bounds what constrained decoding may write: every string
and list has a limit, the open questions and properties are texts (not any JSON), and a
longer answer of another backend still parses (the node clips it)."""

from __future__ import annotations

from typing import Any

from novaberg.graph.nodes.situation import (
    MAX_OBJECTS,
    MAX_OPEN,
    TEXT_CHARS,
    SituationReading,
    clean_situation,
)
from novaberg.llm.base import schema_of


def _nodes(schema: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    """Every sub-schema, `$ref`s resolved."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    found = [schema]
    for child in schema.get("properties", {}).values():
        found += _nodes(child, defs)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += _nodes(schema[key], defs)
    return found


def test_every_string_and_list_is_bounded() -> None:
    schema = schema_of(SituationReading)
    nodes = _nodes(schema, schema.get("$defs", {}))
    strings = [n for n in nodes if n.get("type") == "string"]
    arrays = [n for n in nodes if n.get("type") == "array"]
    assert strings and all("maxLength" in n for n in strings)
    assert arrays and all("maxItems" in n and n["items"] for n in arrays)
    assert schema["properties"]["objekte"]["maxItems"] == MAX_OBJECTS
    assert schema["properties"]["offen"] == {
        "items": {"type": "string", "maxLength": TEXT_CHARS},
        "maxItems": MAX_OPEN,
        "title": "Offen",
        "type": "array",
    }
    properties = schema["$defs"]["SituationObject"]["properties"]["eigenschaften"]
    assert properties["additionalProperties"]["type"] == "string"
    assert "description" not in str(schema), "a docstring would travel with every call"


def test_a_longer_answer_still_parses_and_is_clipped() -> None:
    raw = {
        "gegenstand": "x" * (TEXT_CHARS + 50),
        "objekte": [{"name": f"Ding {i}", "offen": [{"nested": 1}]} for i in range(9)],
        "offen": [f"Frage {i}" for i in range(9)],
    }
    reading = SituationReading.model_validate(raw)
    cleaned = clean_situation(reading.model_dump())
    assert len(cleaned["gegenstand"]) == TEXT_CHARS
    assert len(cleaned["objekte"]) == MAX_OBJECTS
    assert cleaned["offen"] == [f"Frage {i}" for i in range(MAX_OPEN)]
