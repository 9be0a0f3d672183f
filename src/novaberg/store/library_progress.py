"""How far a pass over a library root got, in Redis (`keys.library_progress`): the page asks
any API process, and the pass may run in another one. One small hash per root, expiring
(`keys.LIBRARY_PROGRESS_TTL` after its last write), so a pass that died leaves nothing
behind for long."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import redis.asyncio as aioredis

from novaberg.store import keys

PROGRESS_RUNNING: Final = "laeuft"
PROGRESS_DONE: Final = "fertig"
PROGRESS_FAILED: Final = "fehlgeschlagen"
"""`zustand` of a progress hash: a pass is running, finished, or ended with an error."""


@dataclass(frozen=True, slots=True)
class Progress:
    """`done` of `total` files (None until the folder has been listed); `message`: why a
    failed pass ended (one line)."""

    state: str
    done: int = 0
    total: int | None = None
    message: str = ""


async def write_progress(redis: aioredis.Redis, root_id: int, progress: Progress) -> None:
    key = keys.library_progress(root_id)
    fields = {
        "zustand": progress.state,
        "erledigt": str(progress.done),
        "gesamt": "" if progress.total is None else str(progress.total),
        "meldung": progress.message,
    }
    pipe = redis.pipeline(transaction=True)
    pipe.hset(key, mapping=fields)  # type: ignore[arg-type]
    pipe.expire(key, keys.LIBRARY_PROGRESS_TTL)
    await pipe.execute()


async def clear_progress(redis: aioredis.Redis, root_id: int) -> None:
    await redis.delete(keys.library_progress(root_id))


async def read_progress(redis: aioredis.Redis, root_ids: Sequence[int]) -> dict[int, Progress]:
    """The progress of each root that has one (one round trip for all)."""
    if not root_ids:
        return {}
    pipe = redis.pipeline(transaction=False)
    for root_id in root_ids:
        pipe.hgetall(keys.library_progress(root_id))
    found: dict[int, Progress] = {}
    for root_id, fields in zip(root_ids, await pipe.execute(), strict=True):
        if not fields or "zustand" not in fields:
            continue
        total = fields.get("gesamt", "")
        found[root_id] = Progress(
            fields["zustand"],
            int(fields.get("erledigt") or 0),
            int(total) if total else None,
            fields.get("meldung", ""),
        )
    return found
