"""The person's correction of a short-term entry
(docs/behaviour/memory.md#correcting-and-deleting).

The text is replaced and re-embedded the way a new entry is ("Thema: … Aussage: …") and
stamped as corrected; key, TTL, salience and provenance (turn, observer) stay. Deleting an
entry is the store's (`ShortTermStore.delete`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from novaberg.llm.base import LLM
from novaberg.memory.short_term.entry_text import embed_text
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_fields import EntryFields, Field


async def correct_entry(
    store: ShortTermStore,
    model: LLM,
    pair: Pair,
    key: str,
    text: str,
    *,
    clock: Callable[[], float] = time.time,
) -> bool:
    """Replace the entry's text with the person's; False when `key` is no live entry of
    the pair. The pair's profiles are marked for re-distillation."""
    stored = await store.get(key)
    if stored is None:
        return False
    themes = EntryFields.of(stored.fields).theme_list()
    vector = (await model.embed([embed_text(themes, text)]))[0]
    fields: dict[str, str] = {Field.TEXT: text, Field.CORRECTED_AT: repr(clock())}
    if not await store.correct(pair, key, fields, vector):
        return False
    await store.redis.set(keys.profile_dirty(pair), "1")
    return True
