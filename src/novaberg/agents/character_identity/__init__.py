"""The character identity agent: who the character is for this user (`charakter_anweisungen`)."""

NAME = "charakter_identitaet"
"""The agent's wire name (router target, pending question, agent results)."""

MAX_ACTIVE = 3
"""More active identities than this asks for consolidation (docs/behaviour/agents.md#identity)."""
