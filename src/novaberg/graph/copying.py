"""Cheap copies of a Personality for nodes that change its emotion (or Nova's register space).

Nodes never mutate the Personality they read from the state. A deep copy costs about a
millisecond per node (identities, directives, five profiles); the nodes that write only
`.emotion` (and `.register`) need just those parts fresh. Everything else is shared and must be
treated as read-only — replace it, never mutate it in place.
"""

from __future__ import annotations

import copy
from typing import TypeVar

from novaberg.graph.personality import InternalPersonality, Personality

P = TypeVar("P", bound=Personality)


def emotion_copy(personality: P) -> P:
    """A shallow copy of `personality` with its own `emotion` (and, for Nova, `raum`)."""
    clone = copy.copy(personality)
    clone.emotion = copy.copy(personality.emotion)
    if isinstance(personality, InternalPersonality):
        assert isinstance(clone, InternalPersonality)
        clone.register = copy.copy(personality.register)
    return clone
