"""Tokeniser and word repair for the time parser (docs/behaviour/agents.md#time-parsing).

Why: the grammar should see "märz" whether the user typed "Maerz", "Marz" or
"März", and "freitag" for "Frietag"; and it should see "15.04." as one date
token, "14:30" as one clock token. Punctuation and symbols are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast

from novaberg.memory.time_expressions.words import (
    FUZZY_TARGETS,
    NUMBER_WORDS,
    PROTECTED_WORDS,
    UMLAUT_RESTORATION,
)

# --- Tokens -----------------------------------------------------------------------

TokenKind = Literal["word", "number", "ordinal", "clock", "date", "offset"]


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical unit; ``value`` depends on ``kind``.

    number/ordinal: int; clock: (hour, minute); date: (year|None, month, day);
    offset: minutes east of UTC; word: None (the text is the word).
    """

    kind: TokenKind
    text: str
    value: object = None


_TOKEN = re.compile(
    r"(?P<iso>\d{4})-(?P<iso_m>\d{1,2})-(?P<iso_d>\d{1,2})"
    r"|(?P<dmy_d>\d{1,2})\.(?P<dmy_m>\d{1,2})\.(?P<dmy_y>\d{4}|\d{2}(?!\d))?"
    r"|(?:utc|gmt)\s*(?P<off_sign>[+-])(?P<off_h>\d{1,2})(?::?(?P<off_m>\d{2}))?"
    r"|(?P<clock_h>\d{1,2})[:h](?P<clock_m>\d{2})(?!\d)"
    r"|(?P<dot_h>\d{1,2})\.(?P<dot_m>\d{2})(?=\s*uhr)"
    r"|(?P<dm_d>\d{1,2})\.(?P<dm_m>\d{1,2})(?![\d.])"
    r"|(?P<ord>\d{1,2})(?:\.|st|nd|rd|th)(?![\d.])"
    r"|(?P<num>\d+)(?P<ampm>am|pm)?\b"
    r"|(?P<word>[a-zäöüß]+(?:'[a-z]+)?)"
)


def _number_token(match: re.Match[str]) -> list[Token]:
    number = Token("number", match["num"], int(match["num"]))
    return [number, Token("word", match["ampm"])] if match["ampm"] else [number]


def tokenise(text: str) -> list[Token]:
    """Split lowercased text into typed tokens; punctuation and symbols are dropped."""
    text = text.lower().replace("a.m.", "am").replace("p.m.", "pm").replace("\u2019", "'")
    tokens: list[Token] = []
    for match in _TOKEN.finditer(text):
        raw = match[0]
        if match["iso"]:
            value = (int(match["iso"]), int(match["iso_m"]), int(match["iso_d"]))
            tokens.append(Token("date", raw, value))
        elif match["dmy_d"]:
            year = match["dmy_y"]
            full_year = None if year is None else int(year) + (2000 if len(year) == 2 else 0)
            tokens.append(Token("date", raw, (full_year, int(match["dmy_m"]), int(match["dmy_d"]))))
        elif match["off_sign"]:
            minutes = int(match["off_h"]) * 60 + int(match["off_m"] or 0)
            tokens.append(Token("offset", raw, -minutes if match["off_sign"] == "-" else minutes))
        elif match["clock_h"] or match["dot_h"]:
            hour, minute = match["clock_h"] or match["dot_h"], match["clock_m"] or match["dot_m"]
            tokens.append(Token("clock", raw, (int(hour), int(minute))))
        elif match["dm_d"]:
            tokens.append(Token("date", raw, (None, int(match["dm_m"]), int(match["dm_d"]))))
        elif match["ord"]:
            tokens.append(Token("ordinal", raw, int(match["ord"])))
        elif match["num"]:
            tokens.extend(_number_token(match))
        else:
            tokens.append(Token("word", normalise_word(raw)))
    return tokens


# --- Word repair --------------------------------------------------------------------


def levenshtein(left: str, right: str) -> int:
    """Edit distance (insert, delete, substitute), used by the fuzzy fixer."""
    previous = list(range(len(right) + 1))
    for row, left_char in enumerate(left, start=1):
        current = [row]
        for column, right_char in enumerate(right, start=1):
            cost = 0 if left_char == right_char else 1
            current.append(min(previous[column] + 1, current[-1] + 1, previous[column - 1] + cost))
        previous = current
    return previous[-1]


def _allowed_distance(word: str) -> int:
    """Levenshtein <= 2, scaled down for short words.

    Up to five letters nearly every word is one edit from a month ("jene" ->
    "june", "jung" -> "juni", "mach" -> "march"), so those only get umlaut
    restoration; six letters allow one edit, seven and more two ("frietag").
    """
    if len(word) <= 5:
        return 0
    return 1 if len(word) == 6 else 2


def fuzzy_fix(word: str) -> str:
    """Rewrite a misspelt weekday, month or day word ("frietag" -> "freitag").

    Only a unique closest target counts, with the same first letter and at most
    one letter of length difference, so "dienst" stays "dienst".
    """
    if word in PROTECTED_WORDS or word in FUZZY_TARGETS or len(word) <= 2:
        return word
    limit = _allowed_distance(word)
    if limit == 0:
        return word
    scored = sorted(
        (levenshtein(word, target), target)
        for target in FUZZY_TARGETS
        if target[0] == word[0] and abs(len(target) - len(word)) <= 1
    )
    if not scored or scored[0][0] > limit:
        return word
    if len(scored) > 1 and scored[1][0] == scored[0][0] and scored[1][1] != scored[0][1]:
        return word
    return scored[0][1]


def normalise_word(word: str) -> str:
    """Restore umlauts in whole known words, then fuzzy-fix."""
    return fuzzy_fix(UMLAUT_RESTORATION.get(word, word))


def number_value(token: Token) -> int | None:
    """The integer a number token or a spelled number stands for."""
    if token.kind == "number":
        return cast(int, token.value)
    if token.kind == "word":
        return NUMBER_WORDS.get(token.text)
    return None
