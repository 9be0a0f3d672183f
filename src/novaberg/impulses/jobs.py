"""Pixie jobs that turn Nova's shadow tasks into things she might say
(docs/behaviour/pixie.md#impulse-jobs).

| job | priority / interval | lane | takes | model |
|---|---|---|---|---|
| `nachfragen` | 0.6 / cpu heartbeat | cpu | best `nachfragen` task, or `delegation` while the user's vector is absturz/spirale/einbruch | one embedding |
| `recherche` | 0.5 / llm heartbeat | llm | best `recherche` task, or `delegation` otherwise | ≤ 3 search rounds + structured calls (provider) or one chat call; embeddings |
| `wissensluecken` | 0.35 / llm heartbeat | llm | best `wissensluecken` task (a question Nova could not answer) | as `recherche` |
| `wissen_rueckweg` | 0.4 / cpu heartbeat | cpu | best `wissen_rueckweg` task (knowledge the promotion brought back) | one embedding |
| `wiedervorlage` | 0.5 / 12 h | cpu | due `wiedervorlage_am` of timeline entries and notes (snoozed 7 days) | embeddings |
| `schatten_decay` | 0.2 / daily | cpu | decays the shadow queue, purges the gate log after 30 days | none |

The queue-fed jobs compete only while a task of theirs waits, then on every
heartbeat of their lane. Research (`recherche`, `wissensluecken`) goes through the search
provider in `ctx.services["web"]` (pixie/research.py) and also stores a short-term memory
of Nova's, marked as her research. Each run handles one task (the best) so a lane is never
blocked for long; a task that
failed three times is deleted (impulses/shadow_queue.py). `pixie run JOB --user U
--character C` limits a run to one pair (`ctx.services["scope"]`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from novaberg.ei.vectors import PRESSURE_VECTORS
from novaberg.impulses import shadow_queue
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.shadow_queue import (
    TASK_DELEGATION,
    TASK_FOLLOW_UP,
    TASK_KNOWLEDGE_BACK,
    TASK_KNOWLEDGE_GAP,
    TASK_RESEARCH,
    TASK_RESUBMISSION,
)
from novaberg.impulses.stack import StackEntry, embed_text
from novaberg.memory.bridge import short_term_store_for
from novaberg.memory.short_term.creation import ShortTermWriter
from novaberg.pair import Pair
from novaberg.pixie.research import NO_PROVIDER_MARK, research
from novaberg.pixie.scheduler import LANE_CPU, LANE_LLM, Job, JobContext
from novaberg.store.session import read_turns
from novaberg.wire import ROLE_USER

__all__ = ["NO_PROVIDER_MARK", "impulse_jobs", "route"]

DAY: Final = 86_400
SNOOZE: Final = timedelta(days=7)
"""A resubmission that reached the stack comes back after a week at the earliest."""

GATE_LOG_DAYS: Final = 30
"""Days the impulse gate log is kept."""

RESEARCH_SALIENCE: Final = 0.7
"""Intake salience of the short-term memory a research stores (Nova's side)."""

MEMORY_ORIGIN: Final = "recherche"
"""`quelle` of that memory: Nova's own research."""

GAP_LEAD: Final = "Vorhin wusste ich keine Antwort darauf. "
"""How a worked knowledge gap's entry begins."""


def _scope(ctx: JobContext) -> tuple[str | None, str | None]:
    scope = ctx.services.get("scope") or (None, None)
    return scope[0], scope[1]


def route(task: str, vector: str | None) -> str:
    """Where a task goes: `delegation` becomes nachfragen under pressure, else recherche."""
    if task == TASK_DELEGATION:
        return TASK_FOLLOW_UP if vector in PRESSURE_VECTORS else TASK_RESEARCH
    return task


async def user_state(ctx: JobContext, pair: Pair) -> dict[str, Any]:
    """The user's last session turn (emotion, vector, mode), {} when none is left."""
    turns = [t for t in await read_turns(ctx.redis, pair) if t.get("rolle") == ROLE_USER]
    return turns[-1] if turns else {}


async def _embed(ctx: JobContext, text: str) -> list[float]:
    async with ctx.model_slot():
        return await ctx.model.embed_one(text)  # type: ignore[no-any-return]


async def _entry_from(
    ctx: JobContext, row: Mapping[str, Any], task: str, text: str, user: Mapping[str, Any]
) -> StackEntry:
    return StackEntry(
        aufgabe=task,
        thema=str(row["thema"]),
        inhalt=text,
        embedding=await _embed(ctx, embed_text(str(row["thema"]), text)),
        grund=f"{row['aufgabe']}: {row.get('grund') or ''}".strip(),
        erstellt=ctx.clock(),
        intentionen=list(row.get("intentionen") or []),
        emotion=user.get("emotion") or row.get("emotion"),
        modus=user.get("modus") or row.get("modus"),
        salienz=float(row["salienz_decay"]),
        arousal=row.get("arousal"),
        ausloeser_turn_id=row.get("bezug_id"),
    )


async def _next_task(
    ctx: JobContext, wanted: str
) -> tuple[Mapping[str, Any], dict[str, Any]] | None:
    """The best active task that routes to `wanted`, with the user's last turn."""
    user_id, character_id = _scope(ctx)
    rows = await shadow_queue.best(
        ctx.pool, [wanted, TASK_DELEGATION], user_id=user_id, character_id=character_id
    )
    for row in rows:
        user = await user_state(ctx, Pair(row["user_id"], row["character_id"]))
        if route(row["aufgabe"], user.get("emotions_vektor")) == wanted:
            return row, user
    return None


def follow_up_thought(row: Mapping[str, Any], user: Mapping[str, Any]) -> str:
    feeling = user.get("emotion") or row.get("emotion") or "schwer"
    return (
        f"Ich möchte nachfragen, wie es inzwischen mit „{row['thema']}“ geht — "
        f"vorhin klang das nach {feeling}."
    )


@contextlib.asynccontextmanager
async def _settling(ctx: JobContext, row: Mapping[str, Any]) -> AsyncIterator[None]:
    """Work on one shadow task: done when the block ends (also by an early return), failed
    and re-raised when it raises, so no task stays claimed."""
    try:
        yield
    except Exception:
        await shadow_queue.failed(ctx.pool, row["id"])
        raise
    await shadow_queue.done(ctx.pool, row["id"])


async def follow_up_job(ctx: JobContext) -> Mapping[str, Any]:
    found = await _next_task(ctx, TASK_FOLLOW_UP)
    if found is None:
        return {"aufgaben": 0}
    row, user = found
    pair = Pair(row["user_id"], row["character_id"])
    vector = user.get("emotions_vektor")
    async with _settling(ctx, row):
        if vector not in PRESSURE_VECTORS:
            return {
                "user_id": pair.user_id,
                "auftrag": row["id"],
                "eintrag": None,
                "grund": f"emotionsvektor {vector}: kein nachfragen",
            }
        entry = await _entry_from(ctx, row, TASK_FOLLOW_UP, follow_up_thought(row, user), user)
        await impulse_stack.push(ctx.redis, pair, entry)
    return {
        "user_id": pair.user_id,
        "auftrag": row["id"],
        "eintrag": entry.id,
        "emotionsvektor": vector,
    }


async def _own_memory(
    ctx: JobContext, pair: Pair, row: Mapping[str, Any], task: str, text: str
) -> str:
    """Nova's short-term memory of what she found, marked as her research; once per task
    row (`{task}-{id}`), so a run repeated after a crash stores no second one."""
    memory = ShortTermWriter(
        ctx.redis, ctx.model, pool=ctx.pool, store=short_term_store_for(ctx.redis), clock=ctx.clock
    )
    async with ctx.model_slot():
        stored = await memory.store_own_note(
            pair,
            text,
            [str(row["thema"])],
            origin=MEMORY_ORIGIN,
            intake=RESEARCH_SALIENCE,
            turn_id=f"{task}-{row['id']}",
        )
    return stored.key


async def _research_task(ctx: JobContext, wanted: str, lead: str = "") -> Mapping[str, Any]:
    """Research the best task routed to `wanted`: a stack entry and a memory of Nova's."""
    found = await _next_task(ctx, wanted)
    if found is None:
        return {"aufgaben": 0}
    row, user = found
    pair = Pair(row["user_id"], row["character_id"])
    async with _settling(ctx, row):
        note = await research(ctx, pair, str(row["thema"]), str(row.get("kontext") or ""))
        text = f"{lead}{note.text(str(row['thema']))}"
        entry = await _entry_from(ctx, row, wanted, text, user)
        key = await _own_memory(ctx, pair, row, wanted, text)
        await impulse_stack.push(ctx.redis, pair, entry)
    return {
        "user_id": pair.user_id,
        "auftrag": row["id"],
        "eintrag": entry.id,
        "gedaechtnis": key,
        "quelle": note.source,
        "suchrunden": len(note.queries),
        "adressen": note.urls[:5],
        "erinnerungen": note.memories,
    }


async def research_job(ctx: JobContext) -> Mapping[str, Any]:
    """≤ 3 search rounds through the search provider, or memory and the model's own
    knowledge (marked as such) without one (pixie/research.py)."""
    return await _research_task(ctx, TASK_RESEARCH)


async def knowledge_gap_job(ctx: JobContext) -> Mapping[str, Any]:
    """A question Nova could not answer is researched like a `recherche` task; the entry
    says that she did not know before."""
    return await _research_task(ctx, TASK_KNOWLEDGE_GAP, GAP_LEAD)


def returned_thought(row: Mapping[str, Any]) -> str:
    known = " ".join(str(row.get("kontext") or "").split())[:300]
    return f"Mir ist „{row['thema']}“ wieder eingefallen" + (f": {known}" if known else ".")


async def knowledge_back_job(ctx: JobContext) -> Mapping[str, Any]:
    """Knowledge the promotion brought back becomes a stack entry (no chat call), unless
    the stack already holds a near-duplicate (cos ≥ 0.60)."""
    found = await _next_task(ctx, TASK_KNOWLEDGE_BACK)
    if found is None:
        return {"aufgaben": 0}
    row, user = found
    pair = Pair(row["user_id"], row["character_id"])
    async with _settling(ctx, row):
        entry = await _entry_from(ctx, row, TASK_KNOWLEDGE_BACK, returned_thought(row), user)
        known = impulse_stack.near_duplicates(entry, await impulse_stack.entries(ctx.redis, pair))
        if len(known) == 1:
            await impulse_stack.push(ctx.redis, pair, entry)
    return {
        "user_id": pair.user_id,
        "auftrag": row["id"],
        "eintrag": entry.id if len(known) == 1 else None,
        "schon_im_stapel": known[1:],
    }


_DUE_SQL: Final = """
SELECT 'timeline' AS art, id, user_id, title AS titel, COALESCE(details, '') AS text
FROM timeline WHERE aktiv AND wiedervorlage_am IS NOT NULL AND wiedervorlage_am <= %(now)s
  AND (%(user)s::text IS NULL OR user_id = %(user)s)
UNION ALL
SELECT 'notizen' AS art, id, user_id, name AS titel, COALESCE(text, '') AS text
FROM notizen WHERE aktiv AND wiedervorlage_am IS NOT NULL AND wiedervorlage_am <= %(now)s
  AND (%(user)s::text IS NULL OR user_id = %(user)s)
ORDER BY id LIMIT 50
"""


async def resubmission_job(ctx: JobContext) -> Mapping[str, Any]:
    """Due resubmissions become stack entries; each is snoozed 7 days."""
    user_id, character_id = _scope(ctx)
    character = character_id or str(ctx.services.get("character") or "nova")
    now = datetime.fromtimestamp(ctx.clock(), UTC)
    async with ctx.pool.connection() as conn:
        cur = await conn.execute(_DUE_SQL, {"now": now, "user": user_id})
        rows: list[Any] = await cur.fetchall()
    pushed = 0
    for row in rows:
        kind, row_id, owner, title, text = (
            row["art"],
            row["id"],
            row["user_id"],
            row["titel"],
            row["text"],
        )
        pair = Pair(str(owner), character)
        if kind == "timeline":
            thought = (
                f"Wiedervorlage: „{title}“ ist eine Weile her — ich könnte fragen, wie es war."
            )
        else:
            thought = f"Wiedervorlage der Notiz „{title}“: {str(text)[:200]}".strip()
        entry = StackEntry(
            aufgabe=TASK_RESUBMISSION,
            thema=str(title),
            inhalt=thought,
            embedding=await _embed(ctx, embed_text(str(title), thought)),
            grund=f"wiedervorlage_am von {kind} {row_id} fällig",
            erstellt=ctx.clock(),
        )
        await impulse_stack.push(ctx.redis, pair, entry)
        async with ctx.pool.connection() as conn:
            await conn.execute(
                f"UPDATE {kind} SET wiedervorlage_am = %s WHERE id = %s",  # kind: fixed names
                (now + SNOOZE, row_id),
            )
        pushed += 1
    return {"eintraege": pushed}


async def shadow_decay_job(ctx: JobContext) -> Mapping[str, Any]:
    now = datetime.fromtimestamp(ctx.clock(), UTC)
    updated, deactivated = await shadow_queue.decay_all(ctx.pool, now)
    async with ctx.pool.connection() as conn:
        cur = await conn.execute(
            "DELETE FROM impuls_protokoll WHERE erstellt_am < %s",
            (now - timedelta(days=GATE_LOG_DAYS),),
        )
        purged = cur.rowcount
    return {"aktualisiert": updated, "deaktiviert": deactivated, "protokoll_geloescht": purged}


async def _follow_up_ready(ctx: JobContext) -> bool:
    return await shadow_queue.any_active(ctx.pool, [TASK_FOLLOW_UP, TASK_DELEGATION])


async def _research_ready(ctx: JobContext) -> bool:
    return await shadow_queue.any_active(ctx.pool, [TASK_RESEARCH, TASK_DELEGATION])


async def _gap_ready(ctx: JobContext) -> bool:
    return await shadow_queue.any_active(ctx.pool, [TASK_KNOWLEDGE_GAP])


async def _back_ready(ctx: JobContext) -> bool:
    return await shadow_queue.any_active(ctx.pool, [TASK_KNOWLEDGE_BACK])


def impulse_jobs(cpu_interval: float = 30.0, llm_interval: float = 120.0) -> list[Job]:
    """The queue-fed jobs run on every heartbeat of their lane while tasks wait."""
    return [
        Job(
            "nachfragen",
            0.6,
            cpu_interval,
            follow_up_job,
            LANE_CPU,
            "follow-ups under emotional pressure",
            ready=_follow_up_ready,
        ),
        Job(
            "recherche",
            0.5,
            llm_interval,
            research_job,
            LANE_LLM,
            "research a shadow task",
            ready=_research_ready,
        ),
        Job(
            "wissensluecken",
            0.35,
            llm_interval,
            knowledge_gap_job,
            LANE_LLM,
            "research a question Nova could not answer",
            ready=_gap_ready,
        ),
        Job(
            "wissen_rueckweg",
            0.4,
            cpu_interval,
            knowledge_back_job,
            LANE_CPU,
            "knowledge the promotion brought back",
            ready=_back_ready,
        ),
        Job("wiedervorlage", 0.5, 12 * 3600, resubmission_job, LANE_CPU, "due resubmissions"),
        Job("schatten_decay", 0.2, DAY, shadow_decay_job, LANE_CPU, "shadow queue decay"),
    ]
