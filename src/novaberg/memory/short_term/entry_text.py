"""How a short-term entry's text is embedded and its themes compared
(docs/behaviour/memory.md#creation, docs/behaviour/memory.md#reinforcement)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

CORE_MAX_CHARS: Final = 600
"""A condensed statement (`kern`) longer than this is cut (the prompt asks for ≤ 2
sentences)."""


def theme_set(themes: str | Iterable[str] | None) -> set[str]:
    """Themes compared lowercase and trimmed."""
    if themes is None:
        return set()
    items = themes.split(",") if isinstance(themes, str) else themes
    return {str(t).strip().lower() for t in items if str(t).strip()}


def embed_text(themes: Sequence[str], core: str) -> str:
    """The text that is embedded."""
    if themes:
        return f"Thema: {', '.join(themes)}. Aussage: {core}"
    return f"Aussage: {core}"


def clean_core(text: str) -> str:
    """A condensed statement on one line, without quotes, at most `CORE_MAX_CHARS`."""
    core = " ".join(text.split()).strip().strip('"„“”»«').strip()
    return core[:CORE_MAX_CHARS].rstrip()
