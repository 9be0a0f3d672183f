"""`ModelSlot`: how a background job lets the model gate bound its model calls.

The memory jobs (promotion's embedding, the profiles' distillation) run beside the turns;
the caller passes what opens a background-priority slot of the model gate around each call,
or `no_slot` where nothing bounds them (tests, the CLI).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

ModelSlot = Callable[[], AbstractAsyncContextManager[Any]]
"""Opens a model-gate slot (background priority) around a model call, or does nothing."""


@contextlib.asynccontextmanager
async def no_slot() -> AsyncIterator[None]:
    yield None
