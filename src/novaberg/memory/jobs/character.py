"""charakter: distil profiles, the user weight and long-term goals of a dirty pair
(docs/behaviour/memory.md#distillation).

A new short-term entry or a promotion sets `hash_dirty:{u}:{c}`. This job consumes each
flag (GETDEL, so a write during the distillation sets it again and leads to one more run)
and, for each pair, asks the model (background role, structured calls):
1. the five profile layers of row (u, c) — the user as the character sees them — and of
   row (c, u) — the character's own profile toward the user (one call per row);
2. the character's wheel toward the user, three times: each rating gives
   `nutzer_gewichtung = 0.9 + Σ up − Σ down` (clamped [0.5, 1.5], `memory.wheel`); the
   median one is stored in row (c, u) with its wheel — salience reads it for `pflicht`;
3. the character's long-term goals toward the user, derived from both fresh profiles and
   made the pair's active long-term set (`store.goals.refresh_long_term`).
Profiles failing stops the pair. A failing wheel or goal call is logged and keeps what was
stored (the weight needs all three ratings). Any failure sets the flag again and makes the
job report the failure (the scheduler logs and retries it); what was written stays.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from pydantic import BaseModel, Field

from novaberg.config import Role
from novaberg.llm.base import LLM
from novaberg.llm.errors import ModelError
from novaberg.memory import wheel
from novaberg.memory.model_slot import ModelSlot, no_slot
from novaberg.pair import Pair
from novaberg.prompts import render, user_message
from novaberg.prompts.leak import PROMPT_LEAK, leaked_phrases
from novaberg.store import character_profiles, goals, keys
from novaberg.store.long_term_nodes import list_nodes
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_fields import EntryFields

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

WHEEL_TEMPERATURE: Final = 0.7
"""The three wheel ratings are independent samples; the median drops one outlier on each
side, which only helps if the samples can differ."""

WHEEL_EVIDENCE_ITEMS: Final = 5
"""Newest short-term entries shown beside the profiles when rating the wheel."""

GOALS_TEMPERATURE: Final = 0.3
MAX_LASTING_GOALS: Final = 3
"""Long-term goals per pair and distillation (the prompt asks for at most three)."""


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


class LastingGoalDraft(BaseModel):
    """One proposed long-term goal (the schema's field names are the prompt's)."""

    statement: str = Field(alias="zielsatz", min_length=1, max_length=300)
    topic: str = Field(alias="thema", default="", max_length=60)
    motivation: float = Field(ge=0.1, le=1.0)


class LastingGoals(BaseModel):
    """The model's answer to the goal prompt; an empty list means "no evidence"."""

    goals: list[LastingGoalDraft] = Field(
        alias="ziele", default_factory=list, max_length=MAX_LASTING_GOALS
    )


def _pair_of(flag_key: str) -> Pair | None:
    return keys.pair_of_key(flag_key, "hash_dirty")


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


@dataclass(slots=True)
class Distillation:
    """What one pair's distillation wrote: the profile layers per row, the user weight and
    the long-term goal counts (None: that step failed), and the steps that failed."""

    layers: dict[str, list[str]]
    user_weight: float | None = None
    goals: dict[str, int] | None = None
    failures: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The job's outcome for this pair (logged; the keys are the log's)."""
        result: dict[str, Any] = {"schichten": self.layers}
        if self.user_weight is not None:
            result["nutzer_gewichtung"] = self.user_weight
        if self.goals is not None:
            result["ziele"] = self.goals
        result["fehler"] = self.failures
        return result


async def distil_pair(
    pool: AsyncConnectionPool,
    model: LLM,
    short_term: ShortTermStore,
    pair: Pair,
    *,
    now: datetime,
    slot: ModelSlot = no_slot,
    character_name: str | None = None,
) -> Distillation:
    """Distil both profile rows, the user weight and the long-term goals of a pair.

    Returns what was written, with `failures` listing the steps that failed (empty = all
    ok). Raises if the profiles cannot be distilled.
    """
    entries = [
        EntryFields.of(e.fields)
        for e in (await short_term.entries(pair, with_ttl=False))[:SHORT_TERM_ITEMS]
    ]
    memories = [f"- ({e.observer or '?'}) {_clip(e.text)}" for e in entries if e.text]
    async with pool.connection() as conn:
        nodes = await list_nodes(conn, pair, limit=LONG_TERM_ITEMS)
        user_profile, own_profile = await character_profiles.read_pair_profiles(conn, pair)
    long_term = "\n".join(f"- ({n.observer}) {_clip(n.text)}" for n in nodes)
    name = character_name or pair.character_id.capitalize()
    rows = [
        ((pair.user_id, pair.character_id), pair.user_id, name, user_profile),
        ((pair.character_id, pair.user_id), name, pair.user_id, own_profile),
    ]
    layers: dict[str, list[str]] = {}
    failures: list[str] = []
    for (row_user, row_character), person, counterpart, previous in rows:
        prompt = render(
            "character_distill",
            person=person,
            gegenueber=counterpart,
            bisher=_render_profile(previous),
            kurzzeit="\n".join(memories),
            langzeit=long_term,
        )
        prompt_material = "\n".join((_render_profile(previous), *memories, long_term))
        async with slot():
            answer = await model.structured(
                Role.BACKGROUND,
                user_message(prompt),
                ProfileLayers,
                temperature=DISTILL_TEMPERATURE,
            )
        leaked = leaked_phrases(" ".join(answer.as_layers().values()), (prompt_material,))
        if leaked:  # instruction text is no profile: the row keeps its layers
            log.error("charakter %s: profile of %s repeats prompt text %s", pair, person, leaked)
            failures.append(f"profil {row_user}:{row_character}: {PROMPT_LEAK}")
            continue
        async with pool.connection() as conn:
            layers[f"{row_user}:{row_character}"] = await character_profiles.upsert_layers(
                conn, row_user, row_character, answer.as_layers(), now
            )
    async with pool.connection() as conn:
        user_profile, own_profile = await character_profiles.read_pair_profiles(conn, pair)
    profiles = {
        "person": name,
        "gegenueber": pair.user_id,
        "eigenes_profil": _render_profile(own_profile),
        "gegenueber_profil": _render_profile(user_profile),
    }
    result = Distillation(layers, failures=failures)
    try:
        result.user_weight = await _rate_user_weight(
            pool, model, pair, profiles, memories[:WHEEL_EVIDENCE_ITEMS], now=now, slot=slot
        )
    except ModelError as exc:
        result.failures.append(f"nutzer_gewichtung: {type(exc).__name__}: {exc}")
        log.error("charakter %s: wheel unreadable (%s); nutzer_gewichtung kept", pair, exc)
    try:
        result.goals = await _refresh_goals(pool, model, pair, profiles, now=now, slot=slot)
    except ModelError as exc:
        result.failures.append(f"ziele: {type(exc).__name__}: {exc}")
        log.error("charakter %s: long-term goals unreadable (%s); goals kept", pair, exc)
    return result


async def _rate_user_weight(
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    profiles: dict[str, str],
    memories: list[str],
    *,
    now: datetime,
    slot: ModelSlot,
) -> float:
    """Three wheel ratings → the median weight, stored with its wheel in row (c, u).
    Raises ModelError (nothing stored) if any rating is unreadable."""
    prompt = render("character_wheel", erinnerungen="\n".join(memories), **profiles)
    wheels: list[dict[str, float]] = []
    for _ in range(wheel.SAMPLES):
        async with slot():
            rating = await model.structured(
                Role.BACKGROUND,
                user_message(prompt),
                wheel.SpokeRatings,
                temperature=WHEEL_TEMPERATURE,
            )
        wheels.append(rating.as_wheel())
    weight, chosen = wheel.median_rating(wheels)
    samples = ", ".join(f"{wheel.user_weight(w):.2f}" for w in wheels)
    async with pool.connection() as conn:
        await character_profiles.set_user_weight(
            conn,
            pair,
            weight=weight,
            wheel=chosen,
            source=f"charakter: Median aus {wheel.SAMPLES} Bewertungen ({samples})",
            now=now,
        )
    return weight


def _render_goals(stored: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"- {g['thema'] or '?'}: {_clip(g['zielsatz'])}"
        for g in stored
        if g["ziel_typ"] == goals.LASTING_TYPE
    )


async def _refresh_goals(
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    profiles: dict[str, str],
    *,
    now: datetime,
    slot: ModelSlot,
) -> dict[str, int]:
    """One call for the long-term goals, embedded and made the pair's long-term set."""
    async with pool.connection() as conn:
        current = await goals.active_goals(conn, pair, now, with_embedding=False)
    prompt = render("character_goals", bisherige_ziele=_render_goals(current), **profiles)
    async with slot():
        answer = await model.structured(
            Role.BACKGROUND, user_message(prompt), LastingGoals, temperature=GOALS_TEMPERATURE
        )
    material = "\n".join(profiles.values()) + "\n" + _render_goals(current)
    drafts = []
    for draft in answer.goals:
        if not draft.statement.strip():
            continue
        leaked = leaked_phrases(f"{draft.topic} {draft.statement}", (material,))
        if leaked:  # instruction text is no goal of hers
            log.error("charakter %s: goal repeats prompt text %s; dropped", pair, leaked)
            continue
        drafts.append(draft)
    vectors: list[list[float]] = []
    if drafts:
        async with slot():
            vectors = await model.embed([d.statement.strip() for d in drafts])
    proposed = [
        goals.LastingGoal(d.statement.strip(), d.topic.strip(), d.motivation, vector)
        for d, vector in zip(drafts, vectors, strict=True)
    ]
    async with pool.connection() as conn, conn.transaction():
        return await goals.refresh_long_term(conn, pair, proposed, now)


async def run_distillation(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: LLM,
    *,
    now: float,
    short_term: ShortTermStore | None = None,
    slot: ModelSlot = no_slot,
    limit: int = PAIRS_PER_RUN,
) -> dict[str, Any]:
    """Distil every dirty pair (up to `limit`); raises if any distillation failed."""
    store = short_term or ShortTermStore(redis)
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
            outcome = await distil_pair(
                pool, model, store, pair, now=datetime.fromtimestamp(now, UTC), slot=slot
            )
        except Exception as exc:
            await redis.set(flag, "1")
            failures.append(f"{pair}: {type(exc).__name__}: {exc}")
            log.error("charakter %s: distillation failed (%s); flag set again", pair, exc)
            continue
        done[str(pair)] = outcome.as_json()
        if outcome.failures:
            await redis.set(flag, "1")
            failures.append(f"{pair}: " + "; ".join(outcome.failures))
    if failures:
        raise RuntimeError("; ".join(failures))
    return {"destilliert": done, "offen": max(0, len(flags) - limit)}
