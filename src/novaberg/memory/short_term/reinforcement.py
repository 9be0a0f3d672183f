"""Reinforcement: a new entry strengthens the pair's entries sharing a theme
(docs/behaviour/memory.md#reinforcement).

Each such neighbour gets one more frequency; its salience is recomputed from its stored
intake salience and its TTL raised to the new tier (never shortened); content and embedding
stay. Entries without an intake salience are skipped. Crossing the gate queues the
neighbour's promotion.
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


class Reinforcement:
    """Strengthens the neighbours of a new entry that share one of its themes."""

    def __init__(
        self,
        store: ShortTermStore,
        gate: PromotionGate,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.gate = gate
        self.clock = clock

    async def neighbours(self, pair: Pair, new_key: str, themes: Iterable[str]) -> list[str]:
        """One more frequency for every other entry of the pair sharing a theme; the keys
        strengthened."""
        wanted = theme_set(themes)
        if not wanted:
            return []
        matched, legacy = await self.store.match_themes(pair, new_key, wanted)
        return await self.matched(pair, matched, legacy, wanted)

    async def matched(
        self, pair: Pair, matched: Sequence[ThemeRow], legacy: Sequence[ThemeRow], wanted: set[str]
    ) -> list[str]:
        """The rest of `neighbours` once the matching neighbours have had their frequency
        raised (by the create call or `match_themes`): new saliences and TTLs in one
        script call, then the gate."""
        bumped: list[tuple[str, float, list[str]]] = []
        for row in matched:
            intake = parse_number(row.intake_salience)
            if intake is not None and row.frequency is not None:
                curved = curve.salience(intake, row.frequency)
                bumped.append((row.key, curved, themes_of_field(row.themes)))
        bumped += await self._legacy(legacy, wanted)
        left = await self.store.set_saliences(
            pair, [(key, curved, curve.ttl_seconds(curved)) for key, curved, _ in bumped]
        )
        reinforced: list[str] = []
        for (key, curved, entry_themes), remaining in zip(bumped, left, strict=True):
            if remaining is None:
                continue
            reinforced.append(key)
            await self.gate.queue(pair, key, curved, entry_themes, None, self.clock())
        return reinforced

    async def _legacy(
        self, rows: Sequence[ThemeRow], wanted: set[str]
    ) -> list[tuple[str, float, list[str]]]:
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
        frequencies = await self.store.increment_frequencies([row.key for row, _, _ in found])
        return [
            (row.key, curve.salience(intake, frequency), sorted(entry_themes))
            for (row, intake, entry_themes), frequency in zip(found, frequencies, strict=True)
            if frequency is not None
        ]
