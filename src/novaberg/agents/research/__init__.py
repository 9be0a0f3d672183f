"""The research agent (what Nova looks up for the person at once; cases in `delegation`)."""

from novaberg.wire import COMMITMENT_RESEARCH

NAME = COMMITMENT_RESEARCH
"""The agent's wire name: the commitment it keeps is spelled the same (wire.py)."""
