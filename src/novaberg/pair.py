"""The (user, character) pair: who talks with whom. Every per-conversation key, row and
state is scoped by one; a value every layer passes, so it lives at the bottom."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pair:
    """A (user, character) conversation; every per-conversation key is scoped by it."""

    user_id: str
    character_id: str

    def __str__(self) -> str:
        return f"{self.user_id}:{self.character_id}"
