"""Stopping a small local model that has started to repeat itself.

SmolLM2-135M, given free text to write, often falls into a loop ("X\\n\\nX\\n\\nX…") and
runs on to its token limit: most of a call's time spent on text that is thrown away.
`repetition_cut` spots the loop as soon as a stretch of `REPEAT_WINDOW` characters comes
round a second time and returns the text before the repeat began, so generation can stop
there. Only for free text: JSON repeats keys and punctuation by nature.
"""

from __future__ import annotations

from typing import Final

REPEAT_WINDOW: Final = 48
"""Characters that must reappear verbatim to count as a loop: long enough that a
natural answer almost never repeats them, short enough to catch a loop early."""


def repetition_cut(text: str, window: int = REPEAT_WINDOW) -> str | None:
    """The text up to the end of the loop's first round, once its last `window` characters
    already occurred earlier; None while the text does not repeat itself.

    The loop's period is the distance from the tail to its nearest earlier occurrence;
    its first round starts where the text begins to repeat with that period."""
    if len(text) < 2 * window:
        return None
    start = len(text) - window
    tail = text[start:]
    before = start + window - 1  # occurrences that start before the tail itself
    first = text.find(tail, 0, before)
    if first < 0:
        return None
    period = start - text.rfind(tail, 0, before)
    while first > 0 and text[first - 1] == text[first - 1 + period]:
        first -= 1  # the loop began before the tail's first occurrence
    return text[: first + period].rstrip()
