"""Entity magnets: entries naming the same entity strengthen each other
(docs/behaviour/memory.md#entity-magnets).

With a database, the score's raw entity names are resolved to ids of the `entitaeten` table
(`store/entities.py`) and stored with the entry; the pair's other entries naming one of the
same entities and not already reinforced by a shared theme get one more frequency (their
salience recomputed as for a theme), and the new entry one step too when it found any.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Final

import psycopg
from psycopg_pool import AsyncConnectionPool

from novaberg.ei.canon import parse_number
from novaberg.memory import curve
from novaberg.memory.short_term.gate import PromotionGate
from novaberg.memory.short_term.reinforcement import Bumped, strengthen
from novaberg.pair import Pair
from novaberg.store.entities import Resolution, ids_of_field, resolve_entities
from novaberg.store.short_term import FieldRow, ShortTermStore
from novaberg.store.short_term_fields import Field

log = logging.getLogger(__name__)

MAGNET_FIELDS: Final = (Field.ENTITY_IDS, Field.INTAKE_SALIENCE)
"""What the entity magnets read of each of the pair's entries."""


async def resolve(pool: AsyncConnectionPool | None, pair: Pair, names: Sequence[str]) -> Resolution:
    """Entity ids of the score's raw names; none without a database or names, or when the
    database refused (the memory is then stored without its magnets, logged)."""
    wanted = [str(n) for n in names if str(n).strip()]
    if pool is None or not wanted:
        return Resolution()
    try:
        return await resolve_entities(pool, pair, wanted)
    except psycopg.Error as exc:
        log.error("kzg %s: entities %s not resolved: %s", pair, wanted, exc)
        return Resolution()


async def attract(
    store: ShortTermStore,
    gate: PromotionGate,
    pair: Pair,
    new_key: str,
    entity_ids: Sequence[int],
    already: set[str],
    rows: Sequence[FieldRow],
    *,
    clock: Callable[[], float] = time.time,
) -> list[str]:
    """One more frequency for every other entry of the pair naming one of `entity_ids`
    (skipping `already` reinforced ones), and for the new entry once when any was found;
    saliences and TTLs recomputed. `rows`: the pair's `MAGNET_FIELDS` rows, read by the new
    entry's create call. The keys strengthened, the new one last."""
    wanted = set(entity_ids)
    if not wanted:
        return []
    neighbours = [
        (key, parse_number(intake))
        for key, (ids, intake) in rows
        if key != new_key and key not in already and ids_of_field(ids) & wanted
    ]
    neighbours = [(key, intake) for key, intake in neighbours if intake is not None]
    if not neighbours:
        return []
    own = next((parse_number(v[1]) for k, v in rows if k == new_key), None)
    targets = [*neighbours, *([(new_key, own)] if own is not None else [])]
    frequencies = await store.increment_frequencies([key for key, _ in targets])
    bumped: list[Bumped] = [
        (key, curve.salience(intake, frequency), [])
        for (key, intake), frequency in zip(targets, frequencies, strict=True)
        if frequency is not None and intake is not None
    ]
    return await strengthen(store, gate, pair, bumped, clock)
