"""The library-roots agent: the person approves or revokes, in chat, the folders of hers
Nova may read (docs/behaviour/agents.md#library-roots)."""

from typing import Final

NAME: Final = "dateien_wurzeln"
"""The agent's wire name (the yes/no service of the original design)."""
