"""A `max_tokens` for each structured call, derived from its schema's bounds.

Why: a structured call used to get one flat limit (512 tokens locally, 1024 on a server),
whatever it asked for. A verdict of three short fields can then run on for hundreds of
tokens when a model loops in whitespace (a known failure of servers' plain JSON mode),
and a schema whose maximal answer is longer than the flat limit would be cut and retried.
Every schema here bounds its strings (`maxLength`), lists (`maxItems`) and choices
(`enum`), so the longest valid answer is known before the call: its JSON text is built
(`maximal_json`), and the cap is that text's bytes per `BYTES_PER_TOKEN` plus
`HEADROOM` (a Markdown fence, indentation of a pretty-printed answer).

The bound is checked, not assumed: tests/unit/llm/test_token_caps.py counts the maximal
answer of every structured schema, pretty-printed, with German filler, with the bundled
model's own tokenizer (SmolLM2's, trained on English: German costs it more tokens than the
larger models' tokenizers, so it is the hard case) and asserts the cap is not below it.

A schema with an unbounded part (a string without `maxLength`, a list without
`maxItems`, a free-form object) gets no cap of its own (`None`): the backend's default
applies.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

from pydantic import BaseModel

BYTES_PER_TOKEN = 2.0
"""Conservative: SmolLM2's tokenizer averages ~3 bytes a token on German prose and JSON
keys; 2 leaves room for umlauts and rare words split into single bytes."""

HEADROOM = 48
"""A fence (```json … ```), a newline and indentation per line of a pretty answer."""

NUMBER_TEXT = "-0.12345678901234"
"""The longest number a model writes in practice (a float with full precision)."""

FILLER = "Äußerung über größere Pläne für übermorgen in Köln, Öl und Süßes. "
"""Text a maximal string is filled with: German with umlauts (the costly case)."""


class Unbounded(ValueError):
    """The schema lets an answer grow without limit."""


@functools.cache
def cap_for(schema: type[BaseModel]) -> int | None:
    """`max_tokens` for a structured call answering with `schema` (None: no bound)."""
    try:
        text = maximal_json(schema.model_json_schema())
    except Unbounded:
        return None
    return math.ceil(len(text.encode()) / BYTES_PER_TOKEN) + HEADROOM


def maximal_json(schema: dict[str, Any]) -> str:
    """The compact JSON text of the longest answer `schema` allows (`Unbounded` if none)."""
    return _value(schema, schema.get("$defs", {}))


def _value(node: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in node:
        return _value(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    if "const" in node:
        return json.dumps(node["const"], ensure_ascii=False)
    if "enum" in node:
        return max((json.dumps(v, ensure_ascii=False) for v in node["enum"]), key=len)
    for key in ("anyOf", "oneOf"):
        if key in node:
            return max((_value(option, defs) for option in node[key]), key=len)
    if "allOf" in node:
        return max((_value(option, defs) for option in node["allOf"]), key=len)
    kind = node.get("type")
    if isinstance(kind, list):
        return max((_value({**node, "type": k}, defs) for k in kind), key=len)
    if kind == "string":
        return _string(node)
    if kind in ("number", "integer"):
        return NUMBER_TEXT
    if kind == "boolean":
        return "false"
    if kind == "null":
        return "null"
    if kind == "array":
        return _array(node, defs)
    if kind == "object" or "properties" in node:
        return _object(node, defs)
    raise Unbounded(f"no bound for {node!r}")


def _string(node: dict[str, Any]) -> str:
    limit = node.get("maxLength")
    if limit is None:
        raise Unbounded("string without maxLength")
    filler = FILLER * (limit // len(FILLER) + 1)
    return json.dumps(filler[:limit], ensure_ascii=False)


def _array(node: dict[str, Any], defs: dict[str, Any]) -> str:
    limit = node.get("maxItems")
    if "prefixItems" in node and node.get("items") is False:
        items = [_value(item, defs) for item in node["prefixItems"]]
        return "[" + ", ".join(items) + "]"
    if limit is None:
        raise Unbounded("array without maxItems")
    item = _value(node.get("items", {}), defs)
    return "[" + ", ".join([item] * limit) + "]"


def _object(node: dict[str, Any], defs: dict[str, Any]) -> str:
    extra = node.get("additionalProperties", False)
    if extra not in (False, None) and node.get("maxProperties") is None:
        # A free-form mapping: bounded only if its values and count are.
        raise Unbounded("object without maxProperties")
    parts = [
        f"{json.dumps(name, ensure_ascii=False)}: {_value(sub, defs)}"
        for name, sub in node.get("properties", {}).items()
    ]
    if extra not in (False, None):
        value = _value(extra if isinstance(extra, dict) else {}, defs)
        key = json.dumps(FILLER[:24], ensure_ascii=False)
        parts += [f"{key}: {value}"] * int(node["maxProperties"])
    return "{" + ", ".join(parts) + "}"
