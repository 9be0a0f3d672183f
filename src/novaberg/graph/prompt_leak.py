"""The prompt-leak guard for Nova's answers: the templates' instruction n-grams
(`prompts/leak.py`, where the guard itself lives) plus the instruction text the responder
writes in code. Evaluate uses `leaked_phrases` (graph/nodes/evaluate.py)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Final

from novaberg.graph.nodes.responder import IMPULSE_PROMPT
from novaberg.prompts import leak
from novaberg.prompts.leak import Gram, ngrams, template_ngrams, template_runs

__all__ = ["CODE_INSTRUCTIONS", "instruction_ngrams", "leaked_phrases", "template_runs"]

CODE_INSTRUCTIONS: Final = (IMPULSE_PROMPT,)
"""Instruction text a node writes in code rather than in a template."""


@lru_cache(maxsize=1)
def instruction_ngrams() -> frozenset[Gram]:
    """The templates' n-grams and those of `CODE_INSTRUCTIONS` (computed once)."""
    grams = set(template_ngrams())
    for text in CODE_INSTRUCTIONS:
        grams |= ngrams(text)
    return frozenset(grams)


def leaked_phrases(answer: str, not_instructions: Iterable[str] = ()) -> list[str]:
    """`prompts.leak.leaked_phrases` against every instruction n-gram Nova's prompts hold."""
    return leak.leaked_phrases(answer, not_instructions, instruction_ngrams())


instruction_ngrams()  # at start-up, not in the first person's turn
