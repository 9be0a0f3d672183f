"""The promotion gate: an entry whose curved salience reaches it is queued for promotion
once (docs/behaviour/memory.md#promotion-gate)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from novaberg.memory import curve
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.short_term import ShortTermStore

PROMOTION_TASK: Final = "lzg_promotion"
"""`aufgabe` of a promotion job in `queue:{u}`."""


class PromotionGate:
    """Queues promotions; `enabled=False` (background jobs off: nobody would promote)
    queues nothing."""

    def __init__(self, store: ShortTermStore, *, enabled: bool = True) -> None:
        self.store = store
        self.enabled = enabled

    async def queue(
        self,
        pair: Pair,
        key: str,
        curved: float,
        themes: Sequence[str],
        dimension: str | None,
        now: float,
    ) -> bool:
        """Queue the entry's promotion if `curved` reaches the gate; True when queued now
        (False below the gate, disabled, or queued before)."""
        if not self.enabled or not curve.reaches_promotion(curved):
            return False
        job = {
            "aufgabe": PROMOTION_TASK,
            "user_id": pair.user_id,
            "character_id": pair.character_id,
            "key": key,
            "salienz": curved,
            "themen": list(themes),
            "dimension": dimension or "",
        }
        # mark once and push in one script call: a mark never stays without its job
        return await self.store.queue_promotion(
            key,
            now,
            queue=keys.promotion_queue(pair.user_id),
            users=keys.promotion_users(),
            user=pair.user_id,
            job=json.dumps(job, ensure_ascii=False),
        )
