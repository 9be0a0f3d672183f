"""The person's persona as prompt text (docs/behaviour/web.md#your-persona).

The composer and the responder name the person "Person A" / "der Nutzer" unless the person
set a persona (a name, a short description) in the settings; then one optional block says
who they are. Unset, the text is "" and the block is left out: a plain turn costs the
same tokens as before.
"""

from __future__ import annotations

from typing import Any

from novaberg.graph.state import ConversationState


def _persona(state: ConversationState) -> Any:
    context = state.get("turn_context")
    return getattr(context, "user_persona", None) if context is not None else None


def _lines(state: ConversationState, whom: str, named: str) -> str:
    persona = _persona(state)
    if persona is None:
        return ""
    lines = []
    if persona.name:
        lines.append(named.format(whom=whom, name=persona.name))
    if persona.description:
        lines.append(f"So beschreibt sich {whom} selbst: {persona.description}")
    return "\n".join(lines)


def responder_person(state: ConversationState) -> str:
    """The responder's `[GEGENUEBER]` lines: the person's name (to address them by) and
    their own description; "" without a persona."""
    return _lines(state, "die Person", "Die Person, mit der du sprichst, heißt {name}.")


def composer_person(state: ConversationState) -> str:
    """The composer's `[PERSON-A]` lines: Person A's name and own description; "" without."""
    return _lines(state, "Person A", "{whom} heißt {name}.")
