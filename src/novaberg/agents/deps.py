"""`GraphDeps`: everything a graph node or a task agent may use.

It lives below the graphs because the graphs run the agents and both take it; the
graph contract (`graph/contract.py`) re-exports it for the layers above.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.config import Settings
from novaberg.llm.layer import ModelLayer
from novaberg.store.pipeline_log import PipelineLog
from novaberg.websearch import WebSearchProvider, provider_from_settings


def _wall_clock() -> float:
    return time.time()


@dataclass
class GraphDeps:
    """Everything a node may use. `clock` is injectable so tests need not sleep."""

    settings: Settings
    redis: aioredis.Redis
    pool: AsyncConnectionPool
    model: ModelLayer
    clock: Callable[[], float] = field(default=_wall_clock)
    log: PipelineLog | None = None
    """Node-run log (graph/base.py writes one row per node run). Never None after
    construction: `__post_init__` creates a writer on `pool` when none is given."""
    web: WebSearchProvider | None = None
    """Web search (thinker tools, composer search context); from `NOVABERG_SEARCH_URL`
    when not given, None when that is unset (then no web tool is offered)."""

    def __post_init__(self) -> None:
        if self.log is None:
            self.log = PipelineLog(self.pool)
        if self.web is None:
            self.web = provider_from_settings(self.settings)
