"""Creation: a salience write becomes a short-term entry (docs/behaviour/memory.md#creation).

Refuse an unreadable or too weak salience, condense the segment (LLM, analysis role,
temperature 0.1) into its core statement (`kern`), embed "Thema: … Aussage: …", store with the TTL tier,
reinforce the pair's entries sharing a theme or an entity, queue the promotion once an
entry crosses the gate, mark the profiles dirty. The time expression of a score
(`zeitausdruck_roh`) is resolved before, into the day anchor whose id arrives here as
`timeline_id` (memory/day_anchors.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.config import Role
from novaberg.ei.canon import parse_number
from novaberg.llm.base import LLM
from novaberg.llm.errors import ModelError
from novaberg.memory import curve
from novaberg.memory.short_term.entry_text import clean_core, embed_text, theme_set
from novaberg.memory.short_term.gate import PromotionGate
from novaberg.memory.short_term.magnets import MAGNET_FIELDS, attract, resolve
from novaberg.memory.short_term.reinforcement import reinforce_matched
from novaberg.pair import Pair
from novaberg.prompts import render, user_message
from novaberg.prompts.leak import MAX_LOGGED_PHRASES, PROMPT_LEAK, leaked_phrases
from novaberg.store import keys
from novaberg.store.entities import ids_field
from novaberg.store.pipeline_log import PipelineLog
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_codec import themes_field
from novaberg.store.short_term_fields import (
    DEFAULT_DIMENSION,
    DEFAULT_MEMORY_TYPE,
    OBSERVER_ASSISTANT,
    OBSERVER_USER,
    PERCEPTION_FIELDS,
    NewEntry,
)

log = logging.getLogger(__name__)

CONDENSE_TEMPERATURE: Final = 0.1
CONDENSE_MAX_TOKENS: Final = 256
"""Condensing call: analysis role, temperature 0.1, ≤ 256 tokens."""

INTAKE_SOURCE: Final = "gemessen"
"""Where an entry's intake salience came from when it was measured by the salience node."""

LOG_SOURCE: Final = "kzg"
"""pipeline_log `quelle`/`node` of this service's rows."""


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """A created entry: key, the condensed statement (`core`: the `kern` of the stored
    turn, `session_turn_kern`), curved salience."""

    key: str
    core: str
    salience: float
    intake: float
    promotion_queued: bool
    reinforced: tuple[str, ...] = ()


async def _done() -> None:
    """An awaitable that does nothing (a skipped member of a gather)."""


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


class ShortTermWriter:
    """Creates a pair's short-term entries.

    `promotions=False` (background jobs off: nobody would promote) skips the
    promotion queue; everything else is unchanged. `clock` returns epoch seconds.
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        model: LLM,
        *,
        pool: AsyncConnectionPool | None = None,
        pipeline_log: PipelineLog | None = None,
        store: ShortTermStore | None = None,
        clock: Callable[[], float] = time.time,
        promotions: bool = True,
    ) -> None:
        self.redis = redis
        self.model = model
        self.pool = pool
        self.pipeline_log = pipeline_log
        self.store = store or ShortTermStore(redis)
        self.clock = clock
        self.gate = PromotionGate(self.store, enabled=promotions)

    async def store_salience_write(
        self,
        pair: Pair,
        data: Mapping[str, Any],
        observer: str,
        turn_id: str | None = None,
        perception: Mapping[str, Any] | None = None,
        *,
        timeline_id: int | None = None,
        hints: str = "",
        character_name: str | None = None,
        link_turn: bool = True,
    ) -> StoredEntry | None:
        """Carry out one `kzg` PendingWrite (`data` = {salienz_obj, segment, ...}, the
        salience node's payload).

        `link_turn=False` leaves the `verbindung` row (turn → key) to the caller, which
        writes it together with its own rows in one database round trip.

        Returns None, logged with the reason, when the salience is unreadable or below the
        gate, the segment is empty, the condensing call fails or gives an empty statement, or
        the statement repeats our prompt's instructions (`prompts/leak.py`).
        """
        score = data.get("salienz_obj") or {}
        segment = str(data.get("segment") or "").strip()
        intake = parse_number(score.get("salienz")) if isinstance(score, Mapping) else None
        if intake is None:
            self._refuse(
                pair,
                turn_id,
                "salienz_unlesbar",
                {"salienz": _text(score.get("salienz") if isinstance(score, Mapping) else score)},
            )
            return None
        if not curve.accepted(intake):
            self._refuse(pair, turn_id, "unter_schwelle", {"salienz_eingang": intake}, error=False)
            return None
        if not segment:
            self._refuse(pair, turn_id, "segment_leer", {})
            return None

        themes = [str(t).strip() for t in score.get("themen") or [] if str(t).strip()]
        try:
            core = await self._condense(
                segment, themes, observer, hints, character_name or pair.character_id.capitalize()
            )
        except ModelError as exc:
            self._refuse(
                pair, turn_id, "verdichtung_gescheitert", {"fehler": f"{type(exc).__name__}: {exc}"}
            )
            return None
        if not core:
            self._refuse(pair, turn_id, "kern_leer", {}, error=False)
            return None
        leaked = leaked_phrases(core, (segment, hints, *themes))
        if leaked:  # the model read its instructions back: never a memory
            self._refuse(pair, turn_id, PROMPT_LEAK, {"phrasen": leaked[:MAX_LOGGED_PHRASES]})
            return None
        try:
            vector = (await self.model.embed([embed_text(themes, core)]))[0]
        except ModelError as exc:
            self._refuse(
                pair, turn_id, "embedding_gescheitert", {"fehler": f"{type(exc).__name__}: {exc}"}
            )
            return None

        now = self.clock()
        curved = curve.salience(intake, 1)
        names = score.get("entitaeten_roh") or []
        resolution = await resolve(self.pool, pair, [str(n) for n in names])
        if resolution.ambiguous:
            self._note(pair, turn_id, "entitaet_mehrdeutig", {"namen": resolution.ambiguous})
        entities = resolution.ids
        entry = _new_entry(
            pair,
            score,
            observer,
            themes,
            core,
            intake,
            curved,
            now,
            perception,
            entity_ids=ids_field(entities) if entities else "",
            timeline_id=timeline_id,
            turn_id=turn_id,
        )
        wanted = theme_set(themes)
        # one script call: the entry, "hash_dirty=1", the neighbours' frequency and the
        # entity magnets' read of the pair's entries
        created = await self.store.create_matching(
            pair,
            entry.as_hash(),
            vector,
            ttl_seconds=curve.ttl_seconds(curved),
            epoch_ms=int(now * 1000),
            themes=wanted or None,
            flag=keys.profile_dirty(pair),
            rows_of=MAGNET_FIELDS if entities else (),
        )
        key = created.key
        queued = await self.gate.queue(pair, key, curved, themes, entry.dimension, now)
        # independent writes (Redis neighbours, PostgreSQL link) go out together
        reinforced, _ = await asyncio.gather(
            reinforce_matched(
                self.store,
                self.gate,
                pair,
                created.matched,
                created.legacy,
                wanted,
                clock=self.clock,
            ),
            self._link_turn(turn_id, key) if link_turn else _done(),
        )
        magnets = await attract(
            self.store,
            self.gate,
            pair,
            key,
            entities,
            set(reinforced),
            created.rows,
            clock=self.clock,
        )
        self._note(
            pair,
            turn_id,
            "db_write",
            {
                "key": key,
                "salienz": round(curved, 5),
                "salienz_eingang": intake,
                "themen": themes,
                "verstaerkt": list(reinforced),
                "entitaet_ids": entities,
                "magnete": magnets,
                "befoerderung": queued,
            },
        )
        return StoredEntry(key, core, curved, intake, queued, tuple(reinforced))

    async def store_own_note(
        self,
        pair: Pair,
        text: str,
        themes: Sequence[str],
        *,
        origin: str,
        intake: float,
        turn_id: str | None = None,
    ) -> StoredEntry:
        """A memory of Nova's own that is already condensed (her research note): stored
        from her side (observer assistant) without a condensing call, its source and
        intake origin naming where it came from. Once per `turn_id`: when the pair already
        holds Nova's entry of that id (a job repeated after a crash), that entry is returned
        and nothing is stored."""
        core = clean_core(text)
        if not core:
            raise ValueError("an own note needs a text")
        if turn_id:
            earlier = await self.store.keys_of_turn(pair, turn_id, OBSERVER_ASSISTANT)
            if earlier:
                return StoredEntry(earlier[0], core, curve.salience(intake, 1), intake, False)
        themes = [str(t).strip() for t in themes if str(t).strip()]
        vector = (await self.model.embed([embed_text(themes, core)]))[0]
        now = self.clock()
        curved = curve.salience(intake, 1)
        entry = _new_entry(
            pair,
            {"gedaechtnistyp": DEFAULT_MEMORY_TYPE},
            OBSERVER_ASSISTANT,
            themes,
            core,
            intake,
            curved,
            now,
            None,
            origin=origin,
            turn_id=turn_id,
        )
        created = await self.store.create_matching(
            pair,
            entry.as_hash(),
            vector,
            ttl_seconds=curve.ttl_seconds(curved),
            epoch_ms=int(now * 1000),
            themes=None,
            flag=keys.profile_dirty(pair),
        )
        key = created.key
        queued = await self.gate.queue(pair, key, curved, themes, entry.dimension, now)
        self._note(
            pair, turn_id, "db_write", {"key": key, "quelle": origin, "salienz": round(curved, 5)}
        )
        return StoredEntry(key, core, curved, intake, queued)

    async def _condense(
        self, segment: str, themes: Sequence[str], observer: str, hints: str, name: str
    ) -> str:
        variant = OBSERVER_ASSISTANT if observer == OBSERVER_ASSISTANT else OBSERVER_USER
        prompt = render(
            "short_term_condense",
            variant=variant,
            charakter=name,
            themen=", ".join(themes),
            hinweise=hints,
            aussage=segment,
        )
        text = await self.model.chat(
            Role.ANALYSIS,
            user_message(prompt),
            temperature=CONDENSE_TEMPERATURE,
            max_tokens=CONDENSE_MAX_TOKENS,
        )
        return clean_core(text)

    async def _link_turn(self, turn_id: str | None, key: str) -> None:
        """One `verbindung` row per new key; the promotion fills in the node later."""
        if self.pool is None:
            return
        try:
            async with self.pool.connection() as conn:
                await conn.execute(
                    "INSERT INTO verbindung (turn_id, kzg_id) VALUES (%s, %s)", (turn_id, key)
                )
        except Exception as exc:  # the entry exists; a missing link is reported, not fatal
            log.error("kzg: verbindung for %s (turn %s) not written: %s", key, turn_id, exc)

    def _refuse(
        self,
        pair: Pair,
        turn_id: str | None,
        reason: str,
        detail: Mapping[str, Any],
        *,
        error: bool = True,
    ) -> None:
        level = logging.WARNING if error else logging.INFO
        log.log(level, "kzg %s turn %s: no entry (%s) %s", pair, turn_id, reason, dict(detail))
        self._note(
            pair,
            turn_id,
            "fehler" if error else "bemerkung",
            {"grund": reason, **detail},
            outcome=reason,
        )

    def _note(
        self,
        pair: Pair,
        turn_id: str | None,
        kind: str,
        content: Mapping[str, Any],
        *,
        outcome: str = "ok",
    ) -> None:
        if self.pipeline_log is None:
            return
        self.pipeline_log.add(
            source=LOG_SOURCE,
            node=LOG_SOURCE,
            kind=kind,
            turn_id=turn_id,
            outcome=outcome,
            content=dict(content),
            user_id=pair.user_id,
            character_id=pair.character_id,
        )


def _new_entry(
    pair: Pair,
    score: Mapping[str, Any],
    observer: str,
    themes: Sequence[str],
    core: str,
    intake: float,
    curved: float,
    now: float,
    perception: Mapping[str, Any] | None,
    *,
    entity_ids: str = "",
    timeline_id: int | None = None,
    turn_id: str | None = None,
    origin: str | None = None,
) -> NewEntry:
    """The entry of a score (the salience node's `salienz_obj`, German keys: an LLM schema's
    fields) with the speaker's perception (its German keys as the perception node gives
    them; a field the perception lacks is taken from the score)."""
    seen = dict(perception or {})
    perceived: dict[str, str] = {}
    for name, field_name in PERCEPTION_FIELDS:
        value = seen.get(field_name)
        if value is None or value == "":
            value = score.get(field_name)
        perceived[name] = _text(value)
    return NewEntry(
        user_id=pair.user_id,
        character_id=pair.character_id,
        observer=observer,
        themes=", ".join(themes),
        # what reinforcement compares, normalised here (Python's Unicode lowercasing)
        themes_norm=themes_field(theme_set(", ".join(themes))),
        text=core,
        salience=curved,
        intake_salience=intake,
        intake_origin=origin or INTAKE_SOURCE,
        memory_type=_text(score.get("gedaechtnistyp")) or DEFAULT_MEMORY_TYPE,
        dimension=_text(score.get("dimension")) or DEFAULT_DIMENSION,
        intentions=json.dumps(list(score.get("intentionen") or []), ensure_ascii=False),
        created_at=now,
        perception=perceived,
        entity_ids=entity_ids,
        timeline_id=timeline_id,
        turn_id=turn_id,
        source=origin,
    )
