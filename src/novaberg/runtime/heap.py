"""Hiding a long-running process's startup heap from the cyclic garbage collector."""

from __future__ import annotations

import gc
from typing import Final

YOUNG_THRESHOLD: Final = 5000
"""Allocations (minus frees) that trigger a young-generation collection. CPython's 700 runs
one every few hundred microseconds of a turn, about 0.8 ms of collector work per turn that
finds almost nothing (a turn's objects die by reference count); 5000 runs a seventh as
many, each still walking only the young objects, so no pause grows long."""


def freeze_startup_heap() -> None:
    """Collect once, then move every object built so far (modules, app, pools, graphs) out
    of the cyclic collector's sight. They live as long as the process, and a full
    collection over them stalls the event loop — every request and every turn running in
    the process — for 20 ms (`novaberg api`) to 90 ms (`novaberg serve`) on a small
    machine; frozen, a full collection only walks what was allocated since.

    Called once everything long-lived is built: by the server's lifespan
    (`create_app(freeze_heap=True)`) and by `novaberg worker` after its warm-up."""
    gc.collect()
    gc.freeze()
    pace_collector()


def pace_collector() -> None:
    """Raise the young generation's threshold to `YOUNG_THRESHOLD`, keeping the older
    generations' (they count young collections, so they also run less often)."""
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
