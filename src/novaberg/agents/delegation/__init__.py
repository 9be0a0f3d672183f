"""The delegation agent (matters Nova takes on for the person; the case file `delegation`)."""

from novaberg.wire import COMMITMENT_DELEGATION

NAME = COMMITMENT_DELEGATION
"""The agent's wire name: the commitment it keeps is spelled the same (wire.py)."""
