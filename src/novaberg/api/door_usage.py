"""The `usage` of a door completion: what the client sent as new and what it got back,
counted in tokens as OpenAI's clients expect (Open WebUI shows it, cost trackers add it up).

Nova's turn is many model calls, possibly on several backends with their own tokenizers,
and most of them are her own thinking rather than the exchange the client asked for; so
the door reports the exchange itself — the new user message in, the answer out — estimated
at `CHARS_PER_TOKEN` characters per token (the rule of thumb for BPE tokenizers on
European text), never zero for a non-empty text. The turn's real model spend is in its
pipeline log (`GET /pipeline/{turn_id}`)."""

from __future__ import annotations

from typing import Final

CHARS_PER_TOKEN: Final = 4


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def usage(prompt: str, answer: str) -> dict[str, int]:
    """OpenAI's `usage` object for one exchange."""
    prompt_tokens = estimate_tokens(prompt)
    completion_tokens = estimate_tokens(answer)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
