"""Reading a choice among candidates from a free answer ("die zweite", "Aldi", "3").

Shared by every agent that asks a disambiguation question (docs/behaviour/agents.md#choice).
Order of evidence: a candidate's label contained in the answer (only if exactly one
matches), a date string, a 1-based index or id, then the words for first/second (two
candidates only). Anything else is unclear: the
agent asks again — an uninterpreted answer never selects.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

FIRST_WORDS = frozenset({"erste", "ersten", "erster", "erstes", "obere", "oberen", "first"})
SECOND_WORDS = frozenset(
    {"zweite", "zweiten", "zweiter", "zweites", "untere", "unteren", "andere", "second"}
)
ORDINALS = {
    "erste": 1,
    "zweite": 2,
    "dritte": 3,
    "vierte": 4,
    "fünfte": 5,
    "letzte": -1,
}

MAX_NUMBER_DIGITS = 18
"""An index or a row id; a longer number names no candidate (and int() of thousands of
digits is refused)."""


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def pick_candidate(
    answer: str, candidates: Sequence[dict[str, Any]], label_keys: Sequence[str] = ("name",)
) -> dict[str, Any] | None:
    """The candidate the answer names, or None when it names none or several."""
    if not candidates:
        return None
    text = answer.lower()
    words = _words(answer)
    by_label = []
    for cand in candidates:
        for key in label_keys:
            label = str(cand.get(key) or "").lower().strip()
            if label and label in text:
                by_label.append(cand)
                break
    if len(by_label) == 1:
        return by_label[0]
    # Distinguishing words: a label word that only one candidate has ("Aldi").
    distinct = []
    for cand in candidates:
        own = set(_words(" ".join(str(cand.get(k) or "") for k in label_keys)))
        others = set()
        for other in candidates:
            if other is not cand:
                others |= set(_words(" ".join(str(other.get(k) or "") for k in label_keys)))
        if (own - others) & set(words):
            distinct.append(cand)
    if len(distinct) == 1:
        return distinct[0]
    for cand in candidates:
        datum = str(cand.get("datum") or "")
        if datum and datum in answer:
            return cand
    for word in words:
        if word.isascii() and word.isdigit() and len(word) <= MAX_NUMBER_DIGITS:
            number = int(word)  # "²" is a digit to str.isdigit, but int() refuses it
            if 1 <= number <= len(candidates):
                return candidates[number - 1]
            by_id = [c for c in candidates if c.get("id") == number]
            if len(by_id) == 1:
                return by_id[0]
    for word in words:
        for stem, index in ORDINALS.items():
            if word.startswith(stem) and (index == -1 or index <= len(candidates)):
                return candidates[index if index == -1 else index - 1]
    if len(candidates) == 2:
        if FIRST_WORDS & set(words):
            return candidates[0]
        if SECOND_WORDS & set(words):
            return candidates[1]
    return None
