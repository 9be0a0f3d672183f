"""The one closed consent rule shared by every yes/no gate.

Why: matching substrings misreads answers ("Ja, gerne" would decline because it
contains "ne"; "nein danke, bitte nicht" would confirm because it contains
"bitte"), and a gate that executes on any answer is no gate. The fixed form
(docs/behaviour/agents.md#consent) is:

1. Lowercase and trim; split into whole words.
2. A decline word anywhere declines. Decline is tested first and wins, so
   "ja aber nicht heute" declines. Idioms that contain a negation but mean yes
   ("kein Problem", "warum nicht") therefore decline too; nothing executes, which is
   the safe side of the mistake.
3. An answer executes only if every word is an approval or filler word, at
   least one is an approval word, no character falls outside a fixed allowed set
   (letters, whitespace, ``, . ! ' -``; never ``?``, digits or emoji) and the word
   order does not make it a question ("soll ich", "machst du", "was ...").
4. Everything else is unclear: the gate asks again. An answer that was not
   interpreted never executes.
"""

from __future__ import annotations

import re
from enum import Enum

__all__ = [
    "APPROVAL_PHRASES",
    "APPROVAL_WORDS",
    "DECLINE_WORDS",
    "FILLER_WORDS",
    "QUESTION_WORDS",
    "Consent",
    "interpret_consent",
]


class Consent(Enum):
    """Outcome of a yes/no answer; only APPROVE may lead to a write."""

    APPROVE = "approve"
    DECLINE = "decline"
    UNCLEAR = "unclear"


# --- Word sets -----------------------------------------------------------------
# The closed rule's decline and confirm lists, plus the per-gate lists it replaces
# (notizen "jop, logo, passt, sure, auf jeden", charakter_identitaet "stop"), extended by
# a few obvious German/English forms.
# Apostrophes are removed before lookup, so "don't" is stored as "dont" and
# "mach's" as "machs".

DECLINE_WORDS: frozenset[str] = frozenset(
    {
        # German
        "nein",
        "ne",
        "nee",
        "neee",
        "noe",
        "nö",
        "nöö",
        "nicht",
        "nich",
        "kein",
        "keine",
        "keinen",
        "keinesfalls",
        "nie",
        "niemals",
        "lass",
        "lassen",
        "abbruch",
        "abbrechen",
        "stopp",
        "stop",
        "vergiss",
        "negativ",
        # English
        "no",
        "nope",
        "nah",
        "not",
        "dont",
        "never",
        "cancel",
    }
)
"""Any of these as a whole word declines, whatever else the answer says."""

APPROVAL_WORDS: frozenset[str] = frozenset(
    {
        # German
        "ja",
        "jaa",
        "jau",
        "jo",
        "joa",
        "jop",
        "jup",
        "jap",
        "jep",
        "jepp",
        "jawohl",
        "jawoll",
        "ok",
        "okay",
        "okey",
        "oki",
        "klar",
        "bitte",
        "mach",
        "machs",
        "mache",
        "tu",
        "tus",
        "los",
        "gerne",
        "gern",
        "genau",
        "meinetwegen",
        "sicher",
        "unbedingt",
        "passt",
        "logo",
        "einverstanden",
        "richtig",
        "korrekt",
        "gut",
        # English
        "yes",
        "yeah",
        "yep",
        "yup",
        "sure",
        "alright",
        "please",
    }
)
"""Words that say yes on their own."""

APPROVAL_PHRASES: tuple[tuple[str, ...], ...] = (
    ("auf", "jeden", "fall"),
    ("auf", "jeden"),
    ("in", "ordnung"),
    ("von", "mir", "aus"),
    ("geht", "klar"),
    ("go", "ahead"),
    ("do", "it"),
    ("of", "course"),
    ("sounds", "good"),
)
"""Multi-word approvals; each collapses to one approval token before checking."""

FILLER_WORDS: frozenset[str] = frozenset(
    {
        "na",
        "doch",
        "also",
        "dann",
        "mal",
        "schon",
        "ruhig",
        "einfach",
        "sehr",
        "echt",
        "danke",
        "dankeschön",
        "vielen",
        "dank",
        "gerne",
        "bitte",
        "so",
        # Object pronouns of the proposed action: "mach das", "tu es".
        "das",
        "es",
        # English
        "thanks",
        "thank",
        "you",
        "oh",
        "well",
        "then",
    }
)
"""Words that add nothing; allowed next to an approval word, never enough alone.

Deliberately absent: "aber", "erst", "oder", "vielleicht", any time word and any
personal pronoun except the objects "das"/"es" — those carry content or doubt,
so "ja, aber erst morgen" stays unclear. English "you" is only here for "thank
you"; a question such as "do you" is caught by word order first.
"""

QUESTION_WORDS: frozenset[str] = frozenset(
    {
        "was",
        "wie",
        "wann",
        "wo",
        "warum",
        "wieso",
        "weshalb",
        "weswegen",
        "wer",
        "wen",
        "wem",
        "wessen",
        "welche",
        "welcher",
        "welches",
        "welchen",
        "wohin",
        "woher",
        "wozu",
        "what",
        "why",
        "how",
        "when",
        "where",
        "who",
        "which",
    }
)
"""A leading question word makes the answer a question."""

SUBJECT_PRONOUNS: frozenset[str] = frozenset(
    {"ich", "du", "er", "sie", "es", "wir", "ihr", "man", "i", "you", "we", "he", "she", "they"}
)
"""After a leading non-approval word, one of these reads as verb-subject inversion."""

ALLOWED_CHARACTERS: re.Pattern[str] = re.compile(r"[a-zäöüß\s,.!'\-]*")
"""The fixed character set of an executable answer (after lowercasing)."""

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")


def _tokenise(text: str) -> list[str]:
    """Whole words, apostrophes removed ("mach's" -> "machs")."""
    return [word.replace("'", "") for word in _WORD.findall(text)]


def _collapse_phrases(words: list[str]) -> list[str]:
    """Replace every approval phrase by the single approval word "ja"."""
    result: list[str] = []
    index = 0
    while index < len(words):
        for phrase in APPROVAL_PHRASES:
            if tuple(words[index : index + len(phrase)]) == phrase:
                result.append("ja")
                index += len(phrase)
                break
        else:
            result.append(words[index])
            index += 1
    return result


def _is_question(text: str, words: list[str]) -> bool:
    """A question by punctuation or by word order (question word, verb + subject)."""
    if "?" in text:
        return True
    if not words:
        return False
    if words[0] in QUESTION_WORDS:
        return True
    # "soll ich", "machst du", "do you": a non-approval word, then a subject.
    # "mach es" and "thank you" open with an approval or filler word and stay statements.
    opener_is_plain = words[0] not in APPROVAL_WORDS and words[0] not in FILLER_WORDS
    return len(words) >= 2 and opener_is_plain and words[1] in SUBJECT_PRONOUNS


def interpret_consent(answer: str) -> Consent:
    """Read a free answer to a yes/no question under the closed rule (see module doc)."""
    text = answer.strip().lower().replace("\u2019", "'")
    words = _tokenise(text)
    if any(word in DECLINE_WORDS for word in words):
        return Consent.DECLINE
    if not words or not ALLOWED_CHARACTERS.fullmatch(text):
        return Consent.UNCLEAR
    if _is_question(text, words):
        return Consent.UNCLEAR
    words = _collapse_phrases(words)
    if not all(word in APPROVAL_WORDS or word in FILLER_WORDS for word in words):
        return Consent.UNCLEAR
    if not any(word in APPROVAL_WORDS for word in words):
        return Consent.UNCLEAR
    return Consent.APPROVE
