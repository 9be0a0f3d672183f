"""EI arousal and the plausibility pass over perceived mode and language style
(docs/behaviour/emotion.md#plausibility-pass).

Perception labels can contradict the emotion (a desperate text in "alltag" mode). The EI
arousal weighs the perceived arousal by relationship, intent and tone; a rule chain then
corrects mode and style, the style against a rule-based reading of the role's own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from novaberg.ei.canon import NEGATIVE_SECTORS, POSITIVE_SECTORS, sector_of

EI_WEIGHT_DYNAMIC: Final = 0.40
EI_WEIGHT_INTENT: Final = 0.35
EI_WEIGHT_TONE: Final = 0.25
"""ei = min(1, a × (0.40·D + 0.35·I + 0.25·T)) (docs/behaviour/emotion.md#ei-arousal)."""

EI_UNKNOWN_FACTOR: Final = 1.0
"""Factor for labels missing from the tables below."""

DYNAMIC_FACTOR: Final[Mapping[str, float]] = {
    "hilfesuchend": 1.5,
    "angriff": 1.3,
    "dankbar": 1.2,
    "vertrauen": 1.1,
    "neutral": 1.0,
    "distanz": 0.7,
}
"""D by relationship dynamic."""

INTENT_FACTOR: Final[Mapping[str, float]] = {
    "personal": 1.0,
    "creative": 0.8,
    "smalltalk": 0.5,
    "task": 0.3,
    "knowledge": 0.3,
    "meta": 0.3,
}
"""I by perceived intent."""

TONE_FACTOR: Final[Mapping[str, float]] = {
    "empathisch": 1.3,
    "kreativ": 0.8,
    "direkt": 0.5,
    "sachlich": 0.3,
}
"""T by perceived tone."""

NEGATIVE_EI_THRESHOLD: Final = 0.4
POSITIVE_EI_THRESHOLD: Final = 0.7
"""ei above which a negative / positive emotion makes the register emotional."""

MODE_EMOTIONAL: Final = "emotional"
MODE_EVERYDAY: Final = "alltag"
STYLE_EMOTIONAL: Final = "emotional"
STYLE_NEUTRAL: Final = "neutral"
TONE_FACTUAL: Final = "sachlich"
"""Label values the rule chains use (data values)."""

FORCE_EMOTIONAL: Final = frozenset({"verzweiflung", "traurigkeit"})
"""Emotions that always force mode emotional (docs/behaviour/emotion.md#mode-check)."""

STYLE_ORDER: Final = ("locker", "formell", "fachlich", "emotional", "jugendlich")
"""Rule-based styles in their stable order lo, fo, fa, em, ju
(docs/behaviour/emotion.md#rule-based-style)."""

STYLE_TURNS: Final = 5
"""Rule-based style reads the role's last 5 turns with content."""

SCORE_CACHE_SIZE: Final = 1024
"""Utterances whose style scores are kept: the last turns of the pairs a process serves
at once, each scored again by every node that checks a style."""

STYLE_MIN_SCORE: Final = 1.5
STYLE_TIE_MARGIN: Final = 2.0
"""Top score below 1.5 → neutral; top1 − top2 below 2.0 → profile tiebreak."""

SHORT_SENTENCE: Final = 8
LONG_SENTENCE: Final = 15
RATIO_THRESHOLD: Final = 0.1
RATIO_MIN_WORDS: Final = 3
LONG_WORD: Final = 10
CAPS_MIN_LENGTH: Final = 3
"""Thresholds of the rule table."""

SLANG: Final = frozenset(
    [
        "yo",
        "brudi",
        "digga",
        "alter",
        "lol",
        "nice",
        "krass",
        "mega",
        "safe",
        "vibe",
        "sheesh",
        "geil",
        "ey",
        "vallah",
        "bro",
        "chillen",
        "lit",
        "slay",
    ]
)
POLITE: Final = (
    "sie ",
    " ihnen ",
    "sehr geehrte",
    "mit freundlichen",
    "würde ich",
    "könnte ich",
    "dürfte ich",
    "gestatten",
)
INTERJECTIONS: Final = frozenset(
    ["oh", "wow", "ach", "oje", "mist", "verdammt", "boah", "puh", "hm", "hmm", "tja", "naja"]
)
ABBREVIATIONS: Final = frozenset(["vllt", "evtl", "bzgl", "mfg", "lg", "vg", "omg", "wtf", "tbh"])
SUBJUNCTIVES: Final = frozenset(["hätte", "würde", "könnte", "dürfte", "möchte", "wäre", "sollte"])
"""Word lists of the rule table."""

EMOJI_RANGES: Final = ((0x1F300, 0x1F9FF), (0x2702, 0x27B0), (0x2600, 0x26FF), (0x2700, 0x27BF))
"""Code point ranges counted as emoji."""

_EMOJI: Final = re.compile(
    "[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in EMOJI_RANGES) + "]"
)
"""One character class for all ranges: a regex scan instead of a per-character Python loop."""

STYLE_MARKERS: Final[Mapping[str, tuple[str, ...]]] = {
    "locker": ("locker", "informell", "umgangston", "entspannt", "kurze sätze"),
    "formell": (
        "formell",
        "höflich",
        "strukturiert",
        "vollständige sätze",
        "korrekte zeichensetzung",
        "distanziert",
    ),
    "fachlich": ("fachlich", "analytisch", "präzise", "technisch", "fachbegriffe"),
    "emotional": ("emotional", "expressiv", "gefühlvoll", "leidenschaftlich"),
    "jugendlich": ("jugendlich", "slang", "umgangssprache", "emojis"),
}
"""Profile markers for the style tiebreak."""

_SENTENCE_SPLIT: Final = re.compile(r"[.!?]")


def ei_arousal(arousal: float, relationship_dynamic: str, intent: str, tone: str) -> float:
    """Weighted emotional intensity used by the mode and style checks."""
    weighted = (
        EI_WEIGHT_DYNAMIC * DYNAMIC_FACTOR.get(relationship_dynamic, EI_UNKNOWN_FACTOR)
        + EI_WEIGHT_INTENT * INTENT_FACTOR.get(intent, EI_UNKNOWN_FACTOR)
        + EI_WEIGHT_TONE * TONE_FACTOR.get(tone, EI_UNKNOWN_FACTOR)
    )
    return min(1.0, arousal * weighted)


def check_mode(perceived_emotion: str, mode: str, ei: float) -> str:
    """Correct the perceived mode against the perceived (not canonicalised) emotion
    (docs/behaviour/emotion.md#mode-check)."""
    sector = sector_of(perceived_emotion)
    if sector is None:
        return MODE_EVERYDAY if mode == MODE_EMOTIONAL else mode
    if perceived_emotion in FORCE_EMOTIONAL:
        return MODE_EMOTIONAL
    if sector in NEGATIVE_SECTORS:
        return MODE_EMOTIONAL if ei > NEGATIVE_EI_THRESHOLD else mode
    if sector in POSITIVE_SECTORS:
        return MODE_EMOTIONAL if ei > POSITIVE_EI_THRESHOLD else mode
    return mode


def check_style(
    perceived_style: str, rule_style: str, perceived_emotion: str, ei: float, tone: str
) -> str:
    """Choose between the perceived style P and the rule-based style R
    (docs/behaviour/emotion.md#style-check)."""
    sector = sector_of(perceived_emotion)
    strong_negative = sector in NEGATIVE_SECTORS and ei > NEGATIVE_EI_THRESHOLD
    strong_positive = sector in POSITIVE_SECTORS and ei > POSITIVE_EI_THRESHOLD
    if strong_negative or strong_positive:
        return perceived_style or rule_style
    overstated = perceived_style == STYLE_EMOTIONAL and rule_style != STYLE_EMOTIONAL
    if overstated and (tone == TONE_FACTUAL or sector is None):
        return rule_style
    if perceived_style and perceived_style != STYLE_NEUTRAL:
        return perceived_style
    return rule_style


def _has_emoji(text: str) -> bool:
    return _EMOJI.search(text) is not None


def score_text(text: str) -> dict[str, int]:
    """Style scores of one utterance by the rule table, keyed by style."""
    return dict(zip(STYLE_ORDER, _scores(text), strict=True))


@lru_cache(maxsize=SCORE_CACHE_SIZE)
def _scores(text: str) -> tuple[int, int, int, int, int]:
    """`score_text`'s values in `STYLE_ORDER`, memoised: a turn scores the same last
    turns of a role about ten times (a tuple, so no caller can change a cached result)."""
    lo = fo = fa = em = ju = 0
    lower = text.lower()
    raw_tokens = text.split()
    tokens = [token.lower() for token in raw_tokens]
    words = len(tokens)

    sentences = [len(part.split()) for part in _SENTENCE_SPLIT.split(text) if part.split()]
    if sentences:
        mean_length = sum(sentences) / len(sentences)
        if mean_length < SHORT_SENTENCE:
            lo, ju = lo + 2, ju + 1
        elif mean_length > LONG_SENTENCE:
            fo, fa = fo + 2, fa + 1
    if words > RATIO_MIN_WORDS and text.count(",") / words > RATIO_THRESHOLD:
        fo, fa = fo + 2, fa + 1
    has_dot, has_comma = "." in text, "," in text
    if has_dot and has_comma:
        fo, fa, ju = fo + 1, fa + 1, ju - 1
    elif not has_dot and not has_comma:
        lo, fo, em, ju = lo + 1, fo - 2, em + 1, ju + 1
    if text.count("!") > 1:
        em, ju = em + 2, ju + 1
    emoji = _has_emoji(text)
    if emoji:
        fo, em, ju = fo - 2, em + 1, ju + 1
    slang_hits = sum(1 for token in tokens if token in SLANG)
    ju, fo = ju + 3 * slang_hits, fo - 2 * slang_hits
    fo += 3 * sum(1 for phrase in POLITE if phrase in lower)
    if words > RATIO_MIN_WORDS:
        long_words = sum(1 for token in tokens if len(token) > LONG_WORD)
        if long_words / words > RATIO_THRESHOLD:
            fa += 3
    if any(token in INTERJECTIONS for token in tokens):
        lo, fo, em, ju = lo + 1, fo - 1, em + 2, ju + 2
    if "..." in text:
        em += 1
    if any(
        len(token) >= CAPS_MIN_LENGTH and token.isupper() and not token.isdigit()
        for token in raw_tokens
    ):
        fo, em, ju = fo - 1, em + 2, ju + 1
    abbreviation = any(token in ABBREVIATIONS for token in tokens)
    if abbreviation:
        lo, fo, ju = lo + 1, fo - 1, ju + 1
    if any(token in SUBJUNCTIVES for token in tokens):
        fo += 2
    if not slang_hits and not emoji and not abbreviation:
        fo, fa = fo + 1, fa + 1
    return (lo, fo, fa, em, ju)


def style_scores(turns: Iterable[Mapping[str, Any]], role: str) -> dict[str, int]:
    """Summed rule scores over the role's last 5 turns that have content."""
    texts = [t["inhalt"] for t in turns if t.get("rolle") == role and t.get("inhalt")]
    total = dict.fromkeys(STYLE_ORDER, 0)
    for text in texts[-STYLE_TURNS:]:
        for style, score in zip(STYLE_ORDER, _scores(str(text)), strict=True):
            total[style] += score
    return total


def rule_based_style(turns: Iterable[Mapping[str, Any]], role: str, profile_text: str = "") -> str:
    """Rule-based language style R of a role's recent words.

    `profile_text` is the character's intentions profile followed by its core profile; when it
    is non-empty a near tie is broken by the first style whose marker it mentions.
    """
    scores = style_scores(turns, role)
    ranked = sorted(STYLE_ORDER, key=lambda style: -scores[style])
    top = ranked[0]
    if scores[top] < STYLE_MIN_SCORE:
        return STYLE_NEUTRAL
    if scores[top] - scores[ranked[1]] < STYLE_TIE_MARGIN and profile_text:
        profile = profile_text.lower()
        for style in STYLE_ORDER:
            if any(marker in profile for marker in STYLE_MARKERS[style]):
                if scores[style] > 0:
                    return style
                break
    return top


@dataclass(frozen=True, slots=True)
class PlausibilityResult:
    """Outcome of one plausibility pass: ei, corrected mode and style, and R for logging."""

    ei: float
    mode: str
    language_style: str
    rule_style: str


def plausibility_pass(
    emotion: str,
    arousal: float,
    mode: str,
    language_style: str,
    relationship_dynamic: str,
    intent: str,
    tone: str,
    turns: Iterable[Mapping[str, Any]],
    role: str,
    profile_text: str = "",
) -> PlausibilityResult:
    """ei → mode check → R → style check, as ei_calc and ei_calc_persist run it."""
    ei = ei_arousal(arousal, relationship_dynamic, intent, tone)
    checked_mode = check_mode(emotion, mode, ei)
    rule_style = rule_based_style(turns, role, profile_text)
    style = check_style(language_style, rule_style, emotion, ei, tone)
    return PlausibilityResult(ei, checked_mode, style, rule_style)


def tiebreak_profile(intentions_profile: str, core_profile: str) -> str:
    """The tiebreak text: intentions profile + core profile."""
    return f"{intentions_profile or ''}\n{core_profile or ''}".strip()
