"""Small text renderings of state parts that several CharacterGraph prompts share.

Responder, thinker, tribunal and corrector all show the directives, the task block or the
persons' labels; rendering them once keeps the prompts consistent.
"""

from __future__ import annotations

from typing import Any, Final

from novaberg.graph.state import ConversationState

TASK_HEADER: Final = "[AUFGABE]"
"""`task_block` arrives with its own header (agents/task_block.py); prompts add their own."""


def directives_text(state: ConversationState) -> str:
    """The active directives as "- rule (context)" lines; "" without any."""
    internal = state.get("internal")
    items: list[Any] = list(getattr(internal, "directives", None) or [])
    lines = []
    for item in items:
        if isinstance(item, dict):
            text = str(item.get("anweisung") or "").strip()
            context = str(item.get("kontext") or "").strip()
        else:
            text, context = str(item).strip(), ""
        if text:
            lines.append(f"- {text}" + (f" ({context})" if context else ""))
    return "\n".join(lines)


def identities_text(state: ConversationState) -> str:
    """The character instructions as "- instruction" lines; "" without any."""
    internal = state.get("internal")
    items = getattr(internal, "identities", None) or []
    return "\n".join(f"- {str(item).strip()}" for item in items if str(item).strip())


def task_text(state: ConversationState) -> str:
    """`task_block` without its own `[AUFGABE]` header line."""
    block = (state.get("task_block") or "").strip()
    if block.startswith(TASK_HEADER):
        block = block[len(TASK_HEADER) :].strip()
    return block


def situation_text(state: ConversationState) -> str:
    """`[LAGEBILD]`: the counterpart's perceived intent and tone."""
    external = state.get("external")
    emotion = getattr(external, "emotion", None)
    intent = getattr(emotion, "intent", "") or "unbekannt"
    tone = getattr(emotion, "tone", "") or "unbekannt"
    return f"Absicht des Nutzers: {intent}. Ton: {tone}."
