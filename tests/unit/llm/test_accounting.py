"""Call scopes (llm/accounting.py): nested scopes all count, a closed scope counts nothing."""

from __future__ import annotations

import asyncio

import pytest

from novaberg.llm.accounting import (
    PARSED_AFTER_HINT,
    PARSED_FIRST,
    record_call,
    record_embedding,
    record_structured,
    track_calls,
)


def test_nested_scopes_all_see_a_call_and_close_in_order() -> None:
    with track_calls() as outer:
        record_call("m1", 10, 5, 0.5)
        with track_calls() as inner:
            record_call("m2", 1, 2, 0.25)
            record_embedding(0.1)
            record_structured("wahrnehmung", PARSED_FIRST)
            record_structured("wahrnehmung", PARSED_FIRST)
        record_structured("wahrnehmung", PARSED_AFTER_HINT)
    record_call("m3", 100, 100, 1.0)  # outside every scope: counted nowhere

    assert (inner.calls, inner.total_tokens, inner.models) == (1, 3, ["m2"])
    assert inner.structured_summary() == {"wahrnehmung": {PARSED_FIRST: 2}}
    assert (outer.calls, outer.total_tokens, outer.models) == (2, 18, ["m1", "m2"])
    assert (outer.embed_calls, outer.model_seconds) == (1, 0.75)
    assert outer.structured_summary() == {"wahrnehmung": {PARSED_AFTER_HINT: 1, PARSED_FIRST: 2}}


def test_a_scope_closes_when_its_block_raises() -> None:
    with track_calls() as outer:
        with pytest.raises(RuntimeError), track_calls() as inner:
            raise RuntimeError("boom")
        record_call("m", 1, 1, 0.0)
    assert (outer.calls, inner.calls) == (1, 0)


async def test_tasks_spawned_inside_a_scope_count_in_it() -> None:
    async def call() -> None:
        record_call("m", 1, 0, 0.0)

    with track_calls() as stats:
        await asyncio.gather(call(), call())
    assert stats.calls == 2
