"""The numbered history block several prompts show (perception, router, situation, the
conversation vector, the query rewrite, the agents' classifiers).

A view of session turns, not storage: it formats the turns it is given
(docs/behaviour/memory.md#session).
"""

from __future__ import annotations

from typing import Any, Final

from novaberg.wire import ROLE_ASSISTANT

VIEW_PAIRS: Final = 5
VIEW_WIDTH: Final = 100
"""Perception and router read the last 5 pairs, 100 chars each."""


def _clip(text: str, width: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def numbered_view(
    turns: list[dict[str, Any]],
    pairs: int = VIEW_PAIRS,
    width: int = VIEW_WIDTH,
    character_label: str = "NOVA",
) -> str:
    """The numbered history block: the last `pairs` pairs, higher number = newer.

    `[n] USER (emotion): …` / `[n] NOVA: …`; "" when there are no turns.
    """
    recent = [turn for turn in turns if str(turn.get("inhalt") or "").strip()][-2 * pairs :]
    lines = []
    for number, turn in enumerate(recent, start=1):
        text = _clip(turn.get("inhalt") or "", width)
        if turn.get("rolle") == ROLE_ASSISTANT:
            lines.append(f"[{number}] {character_label}: {text}")
        else:
            emotion = turn.get("emotion") or "neutral"
            answer = recent[number] if number < len(recent) else {}
            marker = f" {answer['marker']}" if answer.get("marker") else ""
            lines.append(f"[{number}] USER ({emotion}){marker}: {text}")
    return "\n".join(lines)
