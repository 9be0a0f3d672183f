"""The startup heap is frozen and the young generation paced (runtime/heap.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from novaberg.runtime.heap import YOUNG_THRESHOLD, freeze_startup_heap, pace_collector


@pytest.fixture
def collector() -> Iterator[None]:
    """Give the process its collector settings back after the test."""
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def test_pacing_raises_only_the_young_threshold(collector: None) -> None:
    gc.set_threshold(700, 11, 12)
    pace_collector()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 11, 12)


def test_freezing_still_freezes_and_paces_the_collector(collector: None) -> None:
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    freeze_startup_heap()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
