"""Fixtures for graph tests: GraphDeps on the real Redis/PostgreSQL and the scripted model."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer

FIXED_NOW = 1_790_000_000.0
"""A fixed clock so session turns and prompts are reproducible."""


@pytest.fixture
async def deps(settings: Settings, redis, db, model: ModelLayer) -> AsyncIterator[GraphDeps]:  # type: ignore[no-untyped-def]
    graph_deps = GraphDeps(
        settings=settings, redis=redis, pool=db, model=model, clock=lambda: FIXED_NOW
    )
    yield graph_deps
    assert graph_deps.log is not None
    await graph_deps.log.close()


@pytest.fixture
def runtime(deps: GraphDeps) -> GraphRuntime:
    return GraphRuntime(deps)
