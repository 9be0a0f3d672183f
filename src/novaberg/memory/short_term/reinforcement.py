"""Reinforcement: a new entry strengthens the pair's entries sharing a theme
(docs/behaviour/memory.md#reinforcement).

Each such neighbour gets one more frequency; its salience is recomputed from its stored
intake salience and its TTL raised to the new tier (never shortened); content and embedding
stay. Entries without an intake salience are skipped. Crossing the gate queues the
neighbour's promotion. The entity magnets (`magnets.py`) strengthen the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from novaberg.ei.canon import parse_number
from novaberg.memory import curve
from novaberg.memory.short_term.entry_text import theme_set
from novaberg.memory.short_term.gate import PromotionGate
from novaberg.pair import Pair
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_codec import ThemeRow, themes_of_field

Bumped = tuple[str, float, Sequence[str]]
"""(entry key, its new curved salience, its themes) of an entry whose frequency was raised."""


async def strengthen(
    store: ShortTermStore,
    gate: PromotionGate,
    pair: Pair,
    bumped: Sequence[Bumped],
    clock: Callable[[], float],
) -> list[str]:
    """New saliences and TTLs of entries whose frequency was raised, in one script call,
    then the gate; the keys still alive (an entry may have expired meanwhile)."""
    left = await store.set_saliences(
        pair, [(key, curved, curve.ttl_seconds(curved)) for key, curved, _ in bumped]
    )
    strengthened: list[str] = []
    for (key, curved, themes), remaining in zip(bumped, left, strict=True):
        if remaining is None:
            continue
        strengthened.append(key)
        await gate.queue(pair, key, curved, themes, None, clock())
    return strengthened


async def reinforce_neighbours(
    store: ShortTermStore,
    gate: PromotionGate,
    pair: Pair,
    new_key: str,
    themes: Iterable[str],
    *,
    clock: Callable[[], float] = time.time,
) -> list[str]:
    """One more frequency for every other entry of the pair sharing a theme; the keys
    strengthened."""
    wanted = theme_set(themes)
    if not wanted:
        return []
    matched, legacy = await store.match_themes(pair, new_key, wanted)
    return await reinforce_matched(store, gate, pair, matched, legacy, wanted, clock=clock)


async def reinforce_matched(
    store: ShortTermStore,
    gate: PromotionGate,
    pair: Pair,
    matched: Sequence[ThemeRow],
    legacy: Sequence[ThemeRow],
    wanted: set[str],
    *,
    clock: Callable[[], float] = time.time,
) -> list[str]:
    """The rest of `reinforce_neighbours` once the matching neighbours have had their
    frequency raised (by the create call or `match_themes`)."""
    bumped: list[Bumped] = []
    for row in matched:
        intake = parse_number(row.intake_salience)
        if intake is not None and row.frequency is not None:
            curved = curve.salience(intake, row.frequency)
            bumped.append((row.key, curved, themes_of_field(row.themes)))
    bumped += await _legacy(store, legacy, wanted)
    return await strengthen(store, gate, pair, bumped, clock)


async def _legacy(
    store: ShortTermStore, rows: Sequence[ThemeRow], wanted: set[str]
) -> list[Bumped]:
    """Entries stored before the normalised themes field existed: matched here,
    incremented by one more script call (only when there are such neighbours)."""
    found: list[tuple[ThemeRow, float, set[str]]] = []
    for row in rows:
        entry_themes = theme_set(row.themes)
        intake = parse_number(row.intake_salience)
        if entry_themes & wanted and intake is not None:
            found.append((row, intake, entry_themes))
    if not found:
        return []
    frequencies = await store.increment_frequencies([row.key for row, _, _ in found])
    return [
        (row.key, curve.salience(intake, frequency), sorted(entry_themes))
        for (row, intake, entry_themes), frequency in zip(found, frequencies, strict=True)
        if frequency is not None
    ]
