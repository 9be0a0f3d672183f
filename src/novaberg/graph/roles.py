"""The role flags each graph's state carries, defined once (docs/behaviour/graphs.md#role-flags).

Shared nodes (ei_calc, enricher, perception, salience, dispatcher) pick their variant
from these flags: which graph runs (`graph_role`, also the pipeline_log `quelle`), whose
emotion ei_calc works on (`ei_calc_role`) and whose words perception reads
(`perception_role`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from novaberg.wire import (
    EI_ROLE_CHARACTER,
    EI_ROLE_USER,
    GRAPH_AGENT,
    GRAPH_CHARACTER,
    GRAPH_HUMAN,
    PERCEIVE_ASSISTANT,
    PERCEIVE_USER,
)

HUMAN_ROLES: Final[Mapping[str, str]] = {
    "graph_role": GRAPH_HUMAN,
    "ei_calc_role": EI_ROLE_USER,
    "perception_role": PERCEIVE_USER,
}
"""Path 1: the counterpart's words, the counterpart's emotion."""

CHARACTER_ROLES: Final[Mapping[str, str]] = {
    "graph_role": GRAPH_CHARACTER,
    "ei_calc_role": EI_ROLE_CHARACTER,
    "perception_role": PERCEIVE_ASSISTANT,
}
"""Path 2: the character's answer, the character's emotion."""

AGENT_ROLES: Final[Mapping[str, str]] = {
    "graph_role": GRAPH_AGENT,
    "ei_calc_role": EI_ROLE_CHARACTER,
    "perception_role": PERCEIVE_ASSISTANT,
}
"""An own thought arising: stored from the character's perspective."""
