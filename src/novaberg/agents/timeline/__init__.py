"""The timeline agent (appointments and reminders, table `timeline`)."""

NAME = "timeline"
"""The agent's wire name (router target, pending question, agent results)."""
