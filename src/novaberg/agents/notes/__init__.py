"""The notes agent (lists and notes, table `notizen`)."""

NAME = "notizen"
"""The agent's wire name (router target, pending question, agent results)."""
