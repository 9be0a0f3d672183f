"""JSON parsing that refuses too deep nesting before the parser runs.

Why: Python's `json` recurses once per nesting level, and so does any code walking the
result. A 1 KB body of 3,000 `[` ends in a `RecursionError` — a 500 with a 100 KB traceback
— and anything recursive over a parsed value (a surrogate check, a card's text check) fails
the same way. No JSON a person sends nests deep: a character card is about 5 levels, a chat
export about 8. So every parse of outside JSON goes through `loads`, which first checks the
depth against `MAX_DEPTH`; callers may then walk the value recursively.

The check runs at C speed, in a handful of passes over the bytes (no Python loop per byte):
escapes are removed, every byte but quotes and brackets is deleted, string literals are cut
out, `{}` are folded into `[]`, and innermost `[]` pairs are peeled off with `bytes.replace`
up to the limit. What stops shrinking before it is empty is malformed, not deep — the parser
names that — unless it still holds more unclosed brackets than the limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

MAX_DEPTH: Final = 64
"""Arrays and objects inside each other. Cards nest about 5 levels, chat exports about 8;
Python's own recursion limit (1,000 frames) is far above twice this."""

_STRUCTURE: Final = b'"[]{}'
_DROP: Final = bytes(b for b in range(256) if b not in _STRUCTURE)
_FOLD: Final = bytes.maketrans(b"{}", b"[]")
_STRING: Final = re.compile(rb'"[^"]*"')
"""A string literal once escapes are gone and only quotes and brackets are left."""


class TooDeep(ValueError):
    """The JSON nests deeper than the limit (one sentence: which limit)."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the JSON nests arrays and objects deeper than {limit} levels; no card, chat "
            "export or request needs more than a few"
        )
        self.limit = limit


def _brackets(raw: bytes) -> bytes:
    """Only the brackets outside string literals, `{}` folded into `[]`."""
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    # quotes and brackets only; adjacent quotes are an empty string or two strings that
    # met where a comma or colon was: dropping them hides no bracket outside a string
    kept = unescaped.translate(_FOLD, delete=_DROP).replace(b'""', b"")
    if b'"' in kept:
        kept = _STRING.sub(b"", kept).replace(b'"', b"")  # a string left open: malformed
    return kept


def check_depth(data: bytes | str, limit: int = MAX_DEPTH) -> None:
    """`TooDeep` if the JSON text nests deeper than `limit`; malformed text passes (the
    parser names what is wrong, and cannot recurse deeper than twice the limit on it)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return  # not enough brackets to be deep: the common case, two C passes
    brackets = _brackets(raw)
    for _ in range(limit):
        if not brackets:
            return
        peeled = brackets.replace(b"[]", b"")
        if len(peeled) == len(brackets):
            break  # only ]]][[[ is left: malformed
        brackets = peeled
    else:
        if brackets.replace(b"[]", b"") != brackets:
            raise TooDeep(limit)  # still peeling past the limit
    # what is left is ]]]...[[[: the brackets never closed nest inside each other
    if brackets.count(b"[") > limit:
        raise TooDeep(limit)


def loads(data: bytes | str, limit: int = MAX_DEPTH) -> Any:
    """`json.loads` after `check_depth`: `TooDeep`, `json.JSONDecodeError` (both
    ValueError) or the value, never a `RecursionError`."""
    check_depth(data, limit)
    try:
        return json.loads(data)
    except RecursionError:  # only if called from an already deep stack
        raise TooDeep(limit) from None


def strings(value: Any) -> Iterator[str]:
    """Every string in a parsed value, object keys included, walked with a stack of its own
    (no recursion, whatever the depth)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                stack.append(inner)
                stack.append(key)
        elif isinstance(item, list | tuple):
            stack.extend(item)


def is_utf8(text: str) -> bool:
    """False for a string holding an unpaired UTF-16 surrogate (`"\\ud800"` is valid JSON
    but no character: nothing can store or encode it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
