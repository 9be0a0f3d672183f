"""Text matching shared by the agents' enrich hooks (docs/behaviour/agents.md#enrich-hooks)."""

from __future__ import annotations

import re
from typing import Final

HOOK_ENTRIES_MAX: Final = 3
"""At most this many entries per agent and turn."""

HOOK_WEIGHT: Final = 0.6
"""Below the session summary (1.0), above recent turns (0.5)."""

MIN_WORD: Final = 4
"""Shorter words ("der", "am") would match almost every title."""

_WORD = re.compile(r"[\wÄÖÜäöüß]+")


def keywords(text: str) -> list[str]:
    """The distinct words of `text` with at least four letters, lower case, in order."""
    seen: list[str] = []
    for word in _WORD.findall(text.lower()):
        if len(word) >= MIN_WORD and not word.isdigit() and word not in seen:
            seen.append(word)
    return seen


def like_patterns(text: str) -> list[str]:
    """ILIKE patterns (escaped) for the keywords of `text`."""
    return [
        "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        for word in keywords(text)
    ]
