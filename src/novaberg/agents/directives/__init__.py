"""The directives agent (the user's rules for the character, table `direktiven`)."""

NAME = "direktiven"
"""The agent's wire name (router target, pending question, agent results)."""
