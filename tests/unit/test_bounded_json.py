"""The depth check agrees with the parser: a value nesting d levels passes a limit of d and
is refused below it, whatever its strings hold; nothing makes `loads` raise RecursionError."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novaberg import bounded_json
from novaberg.bounded_json import MAX_DEPTH, TooDeep, check_depth, loads

TRICKY_TEXT = st.text(alphabet=st.sampled_from('[]{}"\\/ aé\n\u2028') | st.characters())
"""Strings full of what the check must not take for structure: brackets, quotes, escapes."""

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY_TEXT, inner, max_size=4),
    max_leaves=30,
)


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(item) for item in value.values()), default=0)
    return 0


def nest(value: Any, levels: int, key: str) -> Any:
    for level in range(levels):
        value = [value] if level % 2 else {key: value}
    return value


@given(VALUES, st.integers(0, 2 * MAX_DEPTH), TRICKY_TEXT, st.booleans(), st.booleans())
def test_the_check_agrees_with_the_parsed_depth(
    value: Any, levels: int, key: str, ascii_only: bool, indent: bool
) -> None:
    deep = nest(value, levels, key)
    text = json.dumps(deep, ensure_ascii=ascii_only, indent=1 if indent else None)
    actual = depth(deep)
    check_depth(text, actual)
    check_depth(text.encode("utf-8", "surrogatepass"), actual)
    if actual > 0:
        with pytest.raises(TooDeep):
            check_depth(text, actual - 1)
    if actual <= MAX_DEPTH:
        assert loads(text) == json.loads(text)
    else:
        with pytest.raises(TooDeep):
            loads(text)


BROKEN = object()
TOO_DEEP = object()


@given(st.integers(0, 300), st.text(alphabet=st.sampled_from('[]{}",:1 \\"'), max_size=400))
def test_any_text_parses_as_json_does_or_is_refused(opening: int, rest: str) -> None:
    """Valid JSON within the limit parses as json.loads parses it, deeper JSON is TooDeep,
    anything else a ValueError: never a RecursionError."""
    text = "[" * opening + rest
    try:
        expected: Any = json.loads(text)
    except RecursionError:
        expected = TOO_DEEP
    except ValueError:
        expected = BROKEN
    try:
        got: Any = loads(text)
    except TooDeep:
        got = TOO_DEEP
    except json.JSONDecodeError:
        got = BROKEN
    if expected is BROKEN or expected is TOO_DEEP:
        assert got is BROKEN or got is TOO_DEEP
    elif depth(expected) <= MAX_DEPTH:
        assert got == expected
    else:
        assert got is TOO_DEEP


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        "[" * 3000 + "]" * 3000,
        '{"text": ' + "[" * 3000 + "]" * 3000 + "}",
        "[{" * 50_000,
        "[" * 100 + '"' + "[" * 100,
    ],
    ids=["unclosed", "balanced", "in an object", "mixed unclosed", "open string"],
)
def test_deep_or_unclosed_nesting_is_too_deep(text: str) -> None:
    with pytest.raises(TooDeep, match="deeper than 64 levels"):
        loads(text)


def test_brackets_inside_strings_are_text() -> None:
    text = json.dumps({"text": "[" * 10_000 + '\\"{' * 1000, "n": [[1]]})
    assert loads(text)["n"] == [[1]]
    with pytest.raises(json.JSONDecodeError):
        loads("[" * 10 + "}" * 10)


def test_strings_walks_keys_and_values_at_any_depth_without_recursion() -> None:
    deep: Any = "unten"
    for level in range(5000):  # far past the interpreter's recursion limit
        deep = {f"k{level}": [deep, level]} if level % 2 else [deep]
    found = set(bounded_json.strings(deep))
    assert "unten" in found and "k4999" in found and "k1" in found
    assert len(found) == 2501, "every key once, the one leaf string"


def test_is_utf8_refuses_only_a_lone_surrogate() -> None:
    assert bounded_json.is_utf8("Grüße 👋")
    assert not bounded_json.is_utf8("\ud800")
    assert not all(bounded_json.is_utf8(s) for s in bounded_json.strings({"a": ["x", "\udfff"]}))
