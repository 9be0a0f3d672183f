"""charakter: distil the five profile layers when a pair is marked dirty (spec pipeline §9).

A new short-term entry or a promotion sets `hash_dirty:{u}:{c}`. This job consumes each
flag (GETDEL, so a write during the distillation sets it again and leads to one more run),
reads the pair's short-term entries and strongest long-term nodes, and asks the model
(background role, one structured call per row) for the five layers of
- row (u, c): the user as the character sees them, and
- row (c, u): the character's own profile toward the user.
If a call fails the flag is set again and the job reports the failure (the scheduler
retries); layers already written stay.

Not done here yet (spec §9): nutzer_gewichtung from 12 rated spokes (median of 3) and the
refresh of long-term goals.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, Final

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from pydantic import BaseModel, Field

from novaberg.config import Role
from novaberg.llm.base import LLM
from novaberg.memory.long_term import ModelSlot, no_slot
from novaberg.prompts import render, user_message
from novaberg.store import character_profiles, keys, lzg
from novaberg.store.keys import Pair
from novaberg.store.kzg import KzgStore

log = logging.getLogger(__name__)

DIRTY_PATTERN: Final = "hash_dirty:*"
"""SCAN pattern of `keys.profile_dirty` (the job runs every 600 s; no index set needed)."""

SHORT_TERM_ITEMS: Final = 20
LONG_TERM_ITEMS: Final = 10
ITEM_CHARS: Final = 200
"""Evidence per prompt: newest 20 short-term entries, 10 strongest nodes, 200 chars each
(the bundled model has a 2048-token context)."""

DISTILL_TEMPERATURE: Final = 0.3
"""Distillation call temperature."""

PAIRS_PER_RUN: Final = 5
"""Dirty pairs handled per run; the rest wait for the next run."""


class ProfileLayers(BaseModel):
    """The model's answer: five short paragraphs (wire names of the prompt)."""

    kern: str = Field(max_length=1500)
    adaptiv: str = Field(max_length=1500)
    beziehung: str = Field(max_length=1500)
    intentionen: str = Field(max_length=1500)
    emotionen: str = Field(max_length=1500)

    def as_layers(self) -> dict[str, str]:
        return {
            "core": self.kern,
            "adaptive": self.adaptiv,
            "relationship": self.beziehung,
            "intentions": self.intentionen,
            "emotions": self.emotionen,
        }


def _pair_of(flag_key: str) -> Pair | None:
    parts = flag_key.split(":")
    if len(parts) != 3 or not parts[1] or not parts[2]:
        return None
    return Pair(parts[1], parts[2])


def _clip(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= ITEM_CHARS else flat[: ITEM_CHARS - 1] + "…"


def _render_profile(profile: dict[str, Any] | None) -> str:
    if not profile:
        return ""
    names = {
        "core": "kern",
        "adaptive": "adaptiv",
        "relationship": "beziehung",
        "intentions": "intentionen",
        "emotions": "emotionen",
    }
    return "\n".join(f"{names[k]}: {_clip(profile[k])}" for k in names if profile.get(k))


async def distil_pair(
    pool: AsyncConnectionPool,
    model: LLM,
    kzg: KzgStore,
    pair: Pair,
    *,
    now: datetime,
    slot: ModelSlot = no_slot,
    character_name: str | None = None,
) -> dict[str, list[str]]:
    """Distil and store both rows of a pair; returns the layers written per row."""
    entries = (await kzg.entries(pair, with_ttl=False))[:SHORT_TERM_ITEMS]
    short_term = "\n".join(
        f"- ({e.fields.get('beobachter', '?')}) {_clip(e.fields.get('inhalt', ''))}"
        for e in entries
        if e.fields.get("inhalt")
    )
    async with pool.connection() as conn:
        nodes = await lzg.list_nodes(conn, pair, limit=LONG_TERM_ITEMS)
        user_profile, own_profile = await character_profiles.read_pair_profiles(conn, pair)
    long_term = "\n".join(f"- ({n['beobachter']}) {_clip(n['inhalt'])}" for n in nodes)
    name = character_name or pair.character_id.capitalize()
    rows = [
        ((pair.user_id, pair.character_id), pair.user_id, name, user_profile),
        ((pair.character_id, pair.user_id), name, pair.user_id, own_profile),
    ]
    written: dict[str, list[str]] = {}
    for (row_user, row_character), person, counterpart, previous in rows:
        prompt = render(
            "character_distill",
            person=person,
            gegenueber=counterpart,
            bisher=_render_profile(previous),
            kurzzeit=short_term,
            langzeit=long_term,
        )
        async with slot():
            answer = await model.structured(
                Role.BACKGROUND,
                user_message(prompt),
                ProfileLayers,
                temperature=DISTILL_TEMPERATURE,
            )
        async with pool.connection() as conn:
            written[f"{row_user}:{row_character}"] = await character_profiles.upsert_layers(
                conn, row_user, row_character, answer.as_layers(), now
            )
    return written


async def run_distillation(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: LLM,
    *,
    now: float,
    kzg: KzgStore | None = None,
    slot: ModelSlot = no_slot,
    limit: int = PAIRS_PER_RUN,
) -> dict[str, Any]:
    """Distil every dirty pair (up to `limit`); raises if any distillation failed."""
    store = kzg or KzgStore(redis)
    flags = sorted([key async for key in redis.scan_iter(match=DIRTY_PATTERN, count=500)])
    done: dict[str, Any] = {}
    failures: list[str] = []
    for flag in flags[:limit]:
        pair = _pair_of(flag)
        if pair is None or flag != keys.profile_dirty(pair):
            log.error("charakter: unexpected dirty flag %r deleted", flag)
            await redis.delete(flag)
            continue
        if await redis.getdel(flag) is None:
            continue  # another runner took it
        try:
            done[str(pair)] = await distil_pair(
                pool, model, store, pair, now=datetime.fromtimestamp(now, UTC), slot=slot
            )
        except Exception as exc:
            await redis.set(flag, "1")
            failures.append(f"{pair}: {type(exc).__name__}: {exc}")
            log.error("charakter %s: distillation failed (%s); flag set again", pair, exc)
    if failures:
        raise RuntimeError("; ".join(failures))
    return {"destilliert": done, "offen": max(0, len(flags) - limit)}
