"""Table names that code passes around as values, defined once.

SQL text names its tables itself; these are the names a caller chooses between (the two
rule tables share one store, `agents/rule_store.py`, and one admin API).
"""

from __future__ import annotations

from typing import Final, Literal

DIRECTIVES: Final = "direktiven"
"""The user's rules for the character."""

IDENTITIES: Final = "charakter_anweisungen"
"""The character instructions (who the character is for this user)."""

RuleTable = Literal["direktiven", "charakter_anweisungen"]
"""Either rule table."""
