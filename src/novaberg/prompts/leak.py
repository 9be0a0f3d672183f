"""The prompt-leak guard: does a model's text repeat instruction text of our prompts?

Small models (the bundled SmolLM2 among them) sometimes echo their prompt instead of
answering — "Das sollst du inhaltlich sagen (Person A ist der Nutzer, Person B bist du)…"
reached a person's chat, and its scraps her memory. Whatever backend answers, such a text is
never released: evaluate treats it as a failed answer (graph/nodes/evaluate.py), so the
corrector rewrites it and, when the rounds are used up, the neutral fallback replaces it;
the post-release tail (short-term memory, imprint) only ever sees the released text. The
background writers whose model text becomes memory (short-term condensing, the session
summary, salience segmentation) drop a leaking output the same way, before it is stored
(docs/behaviour/memory.md#prompt-leaks). Here, below `graph` and `memory`, so both may use it.

How (no model call, a few set look-ups per answer):

- The instruction text is every prompt template in `novaberg/prompts/` with its headers and
  `{placeholders}` cut out: the words between two placeholders are one run, so no n-gram
  spans text a value would fill in. Their word `NGRAM`-grams (lower case, punctuation
  ignored) are computed once, at import, i.e. at the worker's start-up. Instruction text a
  node writes in code is added by its caller (`graph/prompt_leak.py`: the responder's).
- An answer leaks when at least `MIN_HITS` of its own word n-grams are instruction n-grams —
  a copied run of `NGRAM + MIN_HITS - 1` words or two separate copied phrases. One shared
  phrase is chance; two are the model reading its prompt back.
- Not instructions: an n-gram that also occurs in what the person said (quoting her own
  words back is fine, even when she quoted our prompt) or in the text handed to the model as
  material (memory context, library excerpts, agent results).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

from novaberg.prompts import PROMPT_DIR

NGRAM: Final = 6
"""Words per n-gram: long enough that everyday phrases ("was du gerade sagst") do not
match, short enough that a leaked sentence yields several."""

MIN_HITS: Final = 2
"""Instruction n-grams an answer must repeat to count as leaking."""

PROMPT_LEAK: Final = "prompt_leck"
"""The pipeline-log reason (and summary field) of a model text dropped as leaking."""

MAX_LOGGED_PHRASES: Final = 5
"""Leaked phrases a log row names: enough to see which prompt, not the whole text."""

_WORD: Final = re.compile(r"\w+", re.UNICODE)
_HEADER_LINE: Final = re.compile(r"^\[[^\]\n]+\]\s*$", re.MULTILINE)
_PLACEHOLDER: Final = re.compile(r"\{[a-z_][a-z0-9_]*\}")

Gram = tuple[str, ...]


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def ngrams(text: str, n: int = NGRAM) -> set[Gram]:
    tokens = words(text)
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def template_runs(template: str) -> list[str]:
    """The template's literal text, split where a header or a placeholder stands."""
    return [
        run
        for part in _HEADER_LINE.split(template)
        for run in _PLACEHOLDER.split(part)
        if run.strip()
    ]


@lru_cache(maxsize=1)
def template_ngrams() -> frozenset[Gram]:
    """Every instruction n-gram of the bundled prompt templates (computed once)."""
    grams: set[Gram] = set()
    for path in sorted(PROMPT_DIR.glob("*.txt")):
        for run in template_runs(path.read_text(encoding="utf-8")):
            grams |= ngrams(run)
    return frozenset(grams)


def leaked_phrases(
    answer: str,
    not_instructions: Iterable[str] = (),
    instructions: frozenset[Gram] | None = None,
) -> list[str]:
    """The instruction phrases the answer repeats (each as its n-gram's words), if it repeats
    at least `MIN_HITS`; else []. `not_instructions`: the person's words and the material
    given to the model, whose n-grams never count. `instructions`: the n-gram set to test
    against (default: the templates')."""
    if instructions is None:
        instructions = template_ngrams()
    hits = [gram for gram in ngrams(answer) if gram in instructions]
    if len(hits) < MIN_HITS:
        return []
    allowed: set[Gram] = set()
    for text in not_instructions:
        if text:
            allowed |= ngrams(text)
    hits = [gram for gram in hits if gram not in allowed]
    if len(hits) < MIN_HITS:
        return []
    return sorted(" ".join(gram) for gram in hits)


template_ngrams()  # at start-up, not in the first person's turn
