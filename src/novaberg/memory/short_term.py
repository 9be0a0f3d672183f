"""Short-term memory (KZG) as a service: store a salience write, retrieve for the enricher.

Creation (docs/behaviour/memory.md#creation): refuse an unreadable or too weak
salience, condense the segment (LLM, analysis role, temperature 0.1) into `kern`, embed
"Thema: … Aussage: …", store with the TTL tier, reinforce the pair's entries sharing a
theme, queue the promotion once an entry crosses the gate, mark the profiles dirty.
Retrieval is the enricher's KZG resonance: the pair's top 10 by cosine, both perspectives,
kept at (1 + cos)/2 ≥ 0.72 (docs/behaviour/memory.md#retrieval).

Entity magnets (docs/behaviour/memory.md#entity-magnets): with a database, the score's
`entitaeten_roh` are resolved to ids of the `entitaeten` table (`store/entities.py`) and
stored as `entitaet_ids`; the pair's other entries naming one of the same entities and not
already reinforced by a shared theme get haeufigkeit + 1 (their salience recomputed as
for a theme), and the new entry one step too when it found any. The time expression
(`zeitausdruck_roh`) is not resolved.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import psycopg
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.config import Role
from novaberg.ei.canon import parse_number
from novaberg.llm.base import LLM
from novaberg.llm.errors import ModelError
from novaberg.memory import curve
from novaberg.memory.context import SOURCE_SHORT_TERM, ContextEntry
from novaberg.pair import Pair
from novaberg.prompts import render, user_message
from novaberg.store import keys
from novaberg.store.entities import ids_field, ids_of_field, resolve_entities
from novaberg.store.pipeline_log import PipelineLog
from novaberg.store.short_term import FieldRow, ShortTermStore
from novaberg.store.short_term_codec import (
    CORRECTED_FIELD,
    FIELD_THEMES_NORM,
    ShortTermHit,
    ThemeRow,
    themes_field,
    themes_of_field,
)

log = logging.getLogger(__name__)

RETRIEVAL_TOP_K: Final = 10
RETRIEVAL_THRESHOLD: Final = 0.72
"""KNN top 10 of the pair; keep (1 + cos)/2 ≥ 0.72."""

CONDENSE_TEMPERATURE: Final = 0.1
CONDENSE_MAX_TOKENS: Final = 256
"""Condensing call: analysis role, temperature 0.1, ≤ 256 tokens."""

KERN_MAX_CHARS: Final = 600
"""A kern longer than this is cut (the prompt asks for ≤ 2 sentences)."""

DEFAULT_MEMORY_TYPE: Final = "kurz"
DEFAULT_DIMENSION: Final = "kontext"
INTAKE_SOURCE: Final = "gemessen"
"""Entry defaults."""

PROMOTION_TASK: Final = "lzg_promotion"
"""`aufgabe` of a promotion job in `queue:{u}`."""

FIELD_SOURCE: Final = "quelle"
"""Entry field naming where a memory of Nova's own came from (e.g. `recherche`)."""

MAGNET_FIELDS: Final = ("entitaet_ids", "salienz_eingang")
"""What the entity magnets read of each of the pair's entries."""

OBSERVER_USER: Final = "user"
OBSERVER_ASSISTANT: Final = "assistant"

LOG_SOURCE: Final = "kzg"
"""pipeline_log `quelle`/`node` of this service's rows."""

PERCEPTION_FIELDS: Final = (
    "emotion",
    "arousal",
    "modus",
    "emotions_vektor",
    "sprach_stil",
    "beziehungs_dynamik",
    "tone",
)
"""Entry fields copied from the perception of the speaker."""


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """A created entry: key, the condensed kern (→ `session_turn_kern`), curved salience."""

    key: str
    kern: str
    salience: float
    intake: float
    promotion_queued: bool
    reinforced: tuple[str, ...] = ()


async def _done() -> None:
    """An awaitable that does nothing (a skipped member of a gather)."""


def theme_set(themes: str | Iterable[str] | None) -> set[str]:
    """Themes compared lowercase and trimmed."""
    if themes is None:
        return set()
    items = themes.split(",") if isinstance(themes, str) else themes
    return {str(t).strip().lower() for t in items if str(t).strip()}


def embed_text(themes: Sequence[str], kern: str) -> str:
    """The text that is embedded."""
    if themes:
        return f"Thema: {', '.join(themes)}. Aussage: {kern}"
    return f"Aussage: {kern}"


def _clean_kern(text: str) -> str:
    kern = " ".join(text.split()).strip().strip('"„“”»«').strip()
    return kern[:KERN_MAX_CHARS].rstrip()


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


class ShortTermMemory:
    """Writes and reads a pair's short-term memory.

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
        self.promotions = promotions

    # --- creation -------------------------------------------------------------------

    async def store_salience_write(
        self,
        pair: Pair,
        daten: Mapping[str, Any],
        beobachter: str,
        turn_id: str | None = None,
        perception: Mapping[str, Any] | None = None,
        *,
        timeline_id: int | None = None,
        hints: str = "",
        character_name: str | None = None,
        link_turn: bool = True,
    ) -> StoredEntry | None:
        """Carry out one `kzg` PendingWrite (`daten` = {salienz_obj, segment, ...}).

        `link_turn=False` leaves the `verbindung` row (turn → key) to the caller, which
        writes it together with its own rows in one database round trip.

        Returns None, logged with the reason, when the salience is unreadable or below the
        gate, the segment is empty, the condensing call fails or gives an empty kern.
        """
        obj = daten.get("salienz_obj") or {}
        segment = str(daten.get("segment") or "").strip()
        intake = parse_number(obj.get("salienz")) if isinstance(obj, Mapping) else None
        if intake is None:
            self._refuse(
                pair,
                turn_id,
                "salienz_unlesbar",
                {"salienz": _text(obj.get("salienz") if isinstance(obj, Mapping) else obj)},
            )
            return None
        if not curve.accepted(intake):
            self._refuse(pair, turn_id, "unter_schwelle", {"salienz_eingang": intake}, error=False)
            return None
        if not segment:
            self._refuse(pair, turn_id, "segment_leer", {})
            return None

        themes = [str(t).strip() for t in obj.get("themen") or [] if str(t).strip()]
        try:
            kern = await self._condense(
                segment, themes, beobachter, hints, character_name or pair.character_id.capitalize()
            )
        except ModelError as exc:
            self._refuse(
                pair, turn_id, "verdichtung_gescheitert", {"fehler": f"{type(exc).__name__}: {exc}"}
            )
            return None
        if not kern:
            self._refuse(pair, turn_id, "kern_leer", {}, error=False)
            return None
        try:
            vector = (await self.model.embed([embed_text(themes, kern)]))[0]
        except ModelError as exc:
            self._refuse(
                pair, turn_id, "embedding_gescheitert", {"fehler": f"{type(exc).__name__}: {exc}"}
            )
            return None

        now = self.clock()
        curved = curve.salience(intake, 1)
        fields = self._fields(pair, obj, beobachter, themes, kern, intake, curved, now, perception)
        entities = await self._resolve_entities(pair, obj, turn_id)
        if entities:
            fields["entitaet_ids"] = ids_field(entities)
        if timeline_id is not None:
            fields["timeline_id"] = timeline_id
        if turn_id:
            fields["turn_id"] = turn_id
        wanted = theme_set(themes)
        # one script call: the entry, "hash_dirty=1", the neighbours' haeufigkeit and the
        # entity magnets' read of the pair's entries
        created = await self.store.create_matching(
            pair,
            fields,
            vector,
            ttl_seconds=curve.ttl_seconds(curved),
            epoch_ms=int(now * 1000),
            themes=wanted or None,
            flag=keys.profile_dirty(pair),
            rows_of=MAGNET_FIELDS if entities else (),
        )
        key = created.key
        queued = await self._maybe_queue(pair, key, curved, themes, fields["dimension"], now)
        # independent writes (Redis neighbours, PostgreSQL link) go out together
        reinforced, _ = await asyncio.gather(
            self._reinforce(pair, created.matched, created.legacy, wanted),
            self._link_turn(turn_id, key) if link_turn else _done(),
        )
        magnets = await self.attract(pair, key, entities, set(reinforced), created.rows)
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
        return StoredEntry(key, kern, curved, intake, queued, tuple(reinforced))

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
        from her side (`beobachter` assistant) without a condensing call, `quelle` and
        `salienz_eingang_herkunft` naming where it came from. Once per `turn_id`: when the
        pair already holds Nova's entry of that id (a job repeated after a crash), that
        entry is returned and nothing is stored."""
        kern = _clean_kern(text)
        if not kern:
            raise ValueError("an own note needs a text")
        if turn_id:
            earlier = await self.store.keys_of_turn(pair, turn_id, OBSERVER_ASSISTANT)
            if earlier:
                return StoredEntry(earlier[0], kern, curve.salience(intake, 1), intake, False)
        themes = [str(t).strip() for t in themes if str(t).strip()]
        vector = (await self.model.embed([embed_text(themes, kern)]))[0]
        now = self.clock()
        curved = curve.salience(intake, 1)
        obj = {"themen": themes, "gedaechtnistyp": DEFAULT_MEMORY_TYPE}
        fields = self._fields(
            pair, obj, OBSERVER_ASSISTANT, themes, kern, intake, curved, now, None
        )
        fields["salienz_eingang_herkunft"] = origin
        fields[FIELD_SOURCE] = origin
        if turn_id:
            fields["turn_id"] = turn_id
        created = await self.store.create_matching(
            pair,
            fields,
            vector,
            ttl_seconds=curve.ttl_seconds(curved),
            epoch_ms=int(now * 1000),
            themes=None,
            flag=keys.profile_dirty(pair),
        )
        key = created.key
        queued = await self._maybe_queue(pair, key, curved, themes, fields["dimension"], now)
        self._note(
            pair, turn_id, "db_write", {"key": key, "quelle": origin, "salienz": round(curved, 5)}
        )
        return StoredEntry(key, kern, curved, intake, queued)

    async def _resolve_entities(
        self, pair: Pair, obj: Mapping[str, Any], turn_id: str | None
    ) -> list[int]:
        """Entity ids of the score's `entitaeten_roh`; [] without a database or names."""
        names = [str(n) for n in obj.get("entitaeten_roh") or [] if str(n).strip()]
        if self.pool is None or not names:
            return []
        try:
            resolution = await resolve_entities(self.pool, pair, names)
        except psycopg.Error as exc:  # the memory is stored without its magnets
            log.error("kzg %s: entities %s not resolved: %s", pair, names, exc)
            return []
        if resolution.ambiguous:
            self._note(pair, turn_id, "entitaet_mehrdeutig", {"namen": resolution.ambiguous})
        return resolution.ids

    async def attract(
        self,
        pair: Pair,
        new_key: str,
        entity_ids: Sequence[int],
        already: set[str],
        rows: Sequence[FieldRow],
    ) -> list[str]:
        """The entity magnets: haeufigkeit + 1 for every other entry of the pair naming
        one of `entity_ids` (skipping `already` reinforced ones), and for the new entry
        once when any was found; saliences and TTLs recomputed. `rows`: the pair's
        `MAGNET_FIELDS` rows, read by the new entry's create call. The keys strengthened,
        the new one last."""
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
        frequencies = await self.store.increment_frequencies([key for key, _ in targets])
        updates = [
            (key, curve.salience(intake, frequency), frequency)
            for (key, intake), frequency in zip(targets, frequencies, strict=True)
            if frequency is not None and intake is not None
        ]
        left = await self.store.set_saliences(
            pair, [(key, curved, curve.ttl_seconds(curved)) for key, curved, _ in updates]
        )
        strengthened: list[str] = []
        for (key, curved, _), remaining in zip(updates, left, strict=True):
            if remaining is None:
                continue
            strengthened.append(key)
            await self._maybe_queue(pair, key, curved, [], None, self.clock())
        return strengthened

    async def reinforce_neighbours(
        self, pair: Pair, new_key: str, themes: Iterable[str]
    ) -> list[str]:
        """haeufigkeit + 1 for every other entry of the pair sharing a theme
        (docs/behaviour/memory.md#reinforcement).

        Salience is recomputed from the stored `salienz_eingang`, the TTL raised to the new
        tier (never shortened); content and embedding stay. Entries without
        `salienz_eingang` are skipped. Crossing the gate queues the neighbour's promotion.
        """
        wanted = theme_set(themes)
        if not wanted:
            return []
        matched, legacy = await self.store.match_themes(pair, new_key, wanted)
        return await self._reinforce(pair, matched, legacy, wanted)

    async def _reinforce(
        self, pair: Pair, matched: Sequence[ThemeRow], legacy: Sequence[ThemeRow], wanted: set[str]
    ) -> list[str]:
        """The rest of `reinforce_neighbours` once the matching neighbours have had their
        haeufigkeit + 1: new saliences and TTLs in one script call, then the gate."""
        bumped: list[tuple[str, float, list[str]]] = []
        for row in matched:
            intake = parse_number(row.salienz_eingang)
            if intake is not None and row.haeufigkeit is not None:
                curved = curve.salience(intake, row.haeufigkeit)
                bumped.append((row.key, curved, themes_of_field(row.themen)))
        bumped += await self._reinforce_legacy(legacy, wanted)
        left = await self.store.set_saliences(
            pair, [(key, curved, curve.ttl_seconds(curved)) for key, curved, _ in bumped]
        )
        reinforced: list[str] = []
        for (key, curved, entry_themes), remaining in zip(bumped, left, strict=True):
            if remaining is None:
                continue
            reinforced.append(key)
            await self._maybe_queue(pair, key, curved, entry_themes, None, self.clock())
        return reinforced

    async def _reinforce_legacy(
        self, rows: Sequence[ThemeRow], wanted: set[str]
    ) -> list[tuple[str, float, list[str]]]:
        """Entries stored before `themen_norm` existed: matched here, incremented by one
        more script call (only when there are such neighbours)."""
        found: list[tuple[ThemeRow, float, set[str]]] = []
        for row in rows:
            entry_themes = theme_set(row.themen)
            intake = parse_number(row.salienz_eingang)
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

    # --- the person's correction ----------------------------------------------------

    async def correct(self, pair: Pair, key: str, text: str) -> bool:
        """Replace an entry's `inhalt` with the person's text, re-embedded the way a new
        entry is ("Thema: … Aussage: …"), stamped `korrigiert_am`; key, TTL, salience and
        provenance (turn, observer) stay. False when `key` is no live entry of the pair."""
        entry = await self.store.get(key)
        if entry is None:
            return False
        themes = [t.strip() for t in entry.fields.get("themen", "").split(",") if t.strip()]
        vector = (await self.model.embed([embed_text(themes, text)]))[0]
        fields = {"inhalt": text, CORRECTED_FIELD: repr(self.clock())}
        if not await self.store.correct(pair, key, fields, vector):
            return False
        await self.redis.set(keys.profile_dirty(pair), "1")
        return True

    # --- retrieval ------------------------------------------------------------------

    async def nearest(
        self, pair: Pair, vector: Sequence[float] | np.ndarray, k: int = RETRIEVAL_TOP_K
    ) -> list[ShortTermHit]:
        """Top k by cosine without the threshold (emotional gravitation scans these)."""
        return await self.store.nearest(pair, vector, k)

    async def retrieve(
        self,
        pair: Pair,
        vector: Sequence[float] | np.ndarray | None,
        *,
        k: int = RETRIEVAL_TOP_K,
        threshold: float = RETRIEVAL_THRESHOLD,
    ) -> list[ContextEntry]:
        """The enricher's KZG resonance; [] is a valid answer. No reinforcement on read."""
        if vector is None or len(vector) == 0:
            return []
        entries: list[ContextEntry] = []
        for hit in await self.store.nearest(pair, vector, k):
            inhalt = hit.fields.get("inhalt", "").strip()
            if hit.similarity < threshold or not inhalt:
                continue
            if parse_number(hit.fields.get("salienz")) is None:
                log.error("kzg %s: entry %s has no readable salienz; skipped", pair, hit.key)
                continue
            entries.append(context_entry(hit))
        return entries

    # --- internals ------------------------------------------------------------------

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
        return _clean_kern(text)

    def _fields(
        self,
        pair: Pair,
        obj: Mapping[str, Any],
        observer: str,
        themes: Sequence[str],
        kern: str,
        intake: float,
        curved: float,
        now: float,
        perception: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        seen = dict(perception or {})
        fields: dict[str, Any] = {
            "user_id": pair.user_id,
            "character_id": pair.character_id,
            "beobachter": observer,
            "themen": ", ".join(themes),
            # what reinforcement compares, normalised here (Python's Unicode lowercasing)
            FIELD_THEMES_NORM: themes_field(theme_set(", ".join(themes))),
            "inhalt": kern,
            "salienz": repr(curved),
            "salienz_eingang": repr(intake),
            "salienz_eingang_herkunft": INTAKE_SOURCE,
            "haeufigkeit": 1,
            "gedaechtnistyp": _text(obj.get("gedaechtnistyp")) or DEFAULT_MEMORY_TYPE,
            "dimension": _text(obj.get("dimension")) or DEFAULT_DIMENSION,
            "intentionen": json.dumps(list(obj.get("intentionen") or []), ensure_ascii=False),
            "erstellt_am": repr(now),
            "entitaet_ids": "",
        }
        for name in PERCEPTION_FIELDS:
            value = seen.get(name)
            if value is None or value == "":
                value = obj.get(name)
            fields[name] = _text(value)
        return fields

    async def _maybe_queue(
        self,
        pair: Pair,
        key: str,
        curved: float,
        themes: Sequence[str],
        dimension: str | None,
        now: float,
    ) -> bool:
        if not self.promotions or not curve.reaches_promotion(curved):
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

    async def _link_turn(self, turn_id: str | None, key: str) -> None:
        """One `verbindung` row per new key; the promotion fills in lzg_id later."""
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
            ergebnis=reason,
        )

    def _note(
        self,
        pair: Pair,
        turn_id: str | None,
        art: str,
        inhalt: Mapping[str, Any],
        *,
        ergebnis: str = "ok",
    ) -> None:
        if self.pipeline_log is None:
            return
        self.pipeline_log.add(
            quelle=LOG_SOURCE,
            node=LOG_SOURCE,
            art=art,
            turn_id=turn_id,
            ergebnis=ergebnis,
            inhalt=dict(inhalt),
            user_id=pair.user_id,
            character_id=pair.character_id,
        )


def context_entry(hit: ShortTermHit) -> ContextEntry:
    """A search hit as the reducer's ContextEntry."""
    f = hit.fields
    salience = parse_number(f.get("salienz"))
    return ContextEntry(
        quelle=SOURCE_SHORT_TERM,
        subtyp=f.get("dimension") or DEFAULT_DIMENSION,
        inhalt=f.get("inhalt", "").strip(),
        gewicht=float(salience or 0.0),  # retrieve() drops entries without a salience
        meta={
            "key": hit.key,
            "similarity": hit.similarity,
            "themen": f.get("themen", ""),
            "beobachter": f.get("beobachter", ""),
            "erstellt_am": parse_number(f.get("erstellt_am")),
            "arousal": parse_number(f.get("arousal")),
            "emotion": f.get("emotion", ""),
            "modus": f.get("modus", ""),
            "gedaechtnistyp": f.get("gedaechtnistyp", ""),
            "emotions_vektor": f.get("emotions_vektor", ""),
        },
    )
