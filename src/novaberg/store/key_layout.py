"""The one-time move of an installation's Redis keys to the tagged layout (store/keys.py).

Keys written before the hash tags (`prompt_queue:anna:nova`, `zustellung_log:anna`,
`aktive_paare`, ...) are renamed to their tagged names (`prompt_queue:{anna}:nova`,
`zustellung_log:{anna}`, `aktive_paare:{bereit}`) once, at the start of a worker or an API
process, so an existing installation keeps its queues, sessions, short-term memory and
delivery logs. `schluessel_layout` = 2 marks it done; the API and the worker may start
together, so one of them renames under a lease while the other waits for the mark. An
interrupted run is simply run again (a renamed key is no longer found by its old name).

Only for a single Redis: a cluster is new, and has no keys of the old layout. Besides the
names, what holds key names is rewritten too: the members of `kzg_index` sets (entry
keys) and the `key` of queued promotion jobs; the old per-worker processing lists become
per-pair lists with an index, where orphan recovery ends what they held.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any, Final

import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import keys

log = logging.getLogger(__name__)

PAIR_FAMILIES: Final = (
    "prompt_queue",
    "event_queue",
    "turn_laeuft",
    "turn_ereignis",
    "antwort_varianten",
    "turn_stopp",
    "uebertragene_ids",
    "uebertragen_runden",
    "geparkte_ereignisse",
    "session",
    "nova_state",
    "haltung",
    "gv:detail",
    "gv:vorturn",
    "sachlage",
    "sachlage_verlauf",
    "angebot",
    "drive:short_term",
    "kzg",
    "kzg_index",
    "kzg_index_version",
    "kzg_umbettung",
    "hash_dirty",
    "shadow_stack",
    "shadow_stack_fehler",
    "shadow_stack_geparkt",
    "shadow_burst_count",
    "impuls_laeuft",
    "momentum",
)
"""Old `<family>:<user>:<character>[:…]` → `<family>:{<user>}:<character>[:…]`."""

USER_FAMILIES: Final = (
    "zustellung_seq",
    "zustellung_log",
    "pending_agent",
    "last_activity",
    "verbunden",
    "queue",
    "kanal_gesendet",
)
"""Old `<family>:<user>[:…]` → `<family>:{<user>}[:…]`."""

GLOBAL_NAMES: Final = {
    "aktive_paare": keys.active_pairs(),
    "bereite_paare": keys.ready_pairs(),
    "worker_registry": keys.worker_registry(),
    "kanal_nutzer": keys.channel_users(),
    "kanal_ausgang": keys.channel_outbox(),
    "kanal_ausgang_arbeit": keys.channel_outbox_work(),
    "kanal_ausgang_wiederholung": keys.channel_retry(),
    "pixie:paused": keys.pixie_paused(),
    "pixie:gescheitert": keys.pixie_failed(),
}
"""Global keys whose name gained a fixed tag."""

LEASE_SECONDS: Final = 120
WAIT_SECONDS: Final = 120.0
"""How long a process waits for another one's rename before it starts anyway."""


def new_name(old: str) -> str | None:
    """The tagged name of an old-format key; None for a key that keeps its name."""
    if old in GLOBAL_NAMES:
        return GLOBAL_NAMES[old]
    for prefix, build in (
        ("bereit_genommen:", keys.ready_taken),
        ("pixie:schedule:", keys.pixie_schedule),
        ("pixie:running:", keys.pixie_running),
    ):
        rest = old[len(prefix) :]
        if old.startswith(prefix) and not rest.startswith("{"):
            return build(rest)
    if old.startswith("graph_run_lock:") and not old.startswith("graph_run_lock:{"):
        backend, waiting, _ = old[len("graph_run_lock:") :].partition(":nutzer_wartet")
        return keys.model_gate_waiting(backend) if waiting else keys.model_gate(backend)
    for family in sorted(PAIR_FAMILIES, key=len, reverse=True):
        head = family + ":"
        if old.startswith(head) and not old.startswith(head + "{"):
            user_id, colon, rest = old[len(head) :].partition(":")
            if user_id and colon and rest and _plain(user_id):
                return f"{head}{keys.user_tag(user_id)}:{rest}"
    for family in sorted(USER_FAMILIES, key=len, reverse=True):
        head = family + ":"
        if old.startswith(head) and not old.startswith(head + "{"):
            user_id, colon, rest = old[len(head) :].partition(":")
            if user_id and _plain(user_id):
                return f"{head}{keys.user_tag(user_id)}{colon}{rest}"
    return None


def _plain(user_id: str) -> bool:
    return "{" not in user_id and "}" not in user_id


async def ensure_layout(redis: Any) -> None:
    """Rename the old-format keys once (see the module docstring); cheap when done."""
    if not isinstance(redis, aioredis.Redis):  # a cluster client: nothing old to move
        return
    if await redis.get(keys.layout_version()) == str(keys.LAYOUT_VERSION):
        return
    token = uuid.uuid4().hex
    if not await redis.set(keys.layout_lease(), token, nx=True, ex=LEASE_SECONDS):
        await _wait_for_other(redis)
        return
    try:
        moved = await rename_all(redis)
        await redis.set(keys.layout_version(), str(keys.LAYOUT_VERSION))
        if moved:
            log.warning("moved %d Redis key(s) to the tagged key layout", moved)
    finally:
        if await redis.get(keys.layout_lease()) == token:
            await redis.delete(keys.layout_lease())


async def _wait_for_other(redis: aioredis.Redis) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_SECONDS
    while loop.time() < deadline:
        if await redis.get(keys.layout_version()) == str(keys.LAYOUT_VERSION):
            return
        if not await redis.exists(keys.layout_lease()):  # the other one died: take over
            await ensure_layout(redis)
            return
        await asyncio.sleep(0.2)
    log.error("another process is still moving Redis keys to the new layout; starting anyway")


async def rename_all(redis: aioredis.Redis) -> int:
    """Rename every old-format key; returns how many moved."""
    moved = 0
    old_processing: list[str] = []
    async for raw in redis.scan_iter(count=1000):
        old = str(raw)
        if old.startswith("event_processing:") and not old.startswith("event_processing:{"):
            old_processing.append(old)
            continue
        target = new_name(old)
        if target is None:
            continue
        if not await redis.renamenx(old, target):
            log.warning("Redis key %s not moved: %s exists already", old, target)
            continue
        moved += 1
        await _rewrite_contents(redis, old, target)
    for old in old_processing:
        moved += await _split_processing(redis, old)
    return moved


async def _rewrite_contents(redis: aioredis.Redis, old: str, target: str) -> None:
    """Key names held inside values: the kzg index's members, promotion jobs' `key`."""
    if old.startswith("kzg_index:"):
        members = [str(m) for m in await redis.smembers(target)]
        renamed = {m: new for m in members if (new := new_name(m)) is not None}
        if renamed:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.srem(target, *renamed)
                pipe.sadd(target, *renamed.values())
                await pipe.execute()
    elif old.startswith("queue:"):  # a user's promotion jobs (queue, work, failed)
        if await redis.type(target) != "list":
            return
        items = [str(item) for item in await redis.lrange(target, 0, -1)]
        rewritten = [_job_with_new_key(item) for item in items]
        if rewritten != items:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.delete(target)
                pipe.rpush(target, *rewritten)
                await pipe.execute()


def _job_with_new_key(item: str) -> str:
    try:
        job = json.loads(item)
    except ValueError:
        return item
    if not isinstance(job, dict) or not isinstance(job.get("key"), str):
        return item
    renamed = new_name(job["key"])
    if renamed is None:
        return item
    job["key"] = renamed
    return json.dumps(job, ensure_ascii=False)


async def _split_processing(redis: aioredis.Redis, old: str) -> int:
    """An old per-worker processing list → the worker's per-pair lists and its index."""
    worker_id = old[len("event_processing:") :]
    count = 0
    while True:
        raw = await redis.lindex(old, -1)
        if raw is None:
            break
        entry = str(raw)
        pair = _pair_of_entry(entry)
        if pair is not None:
            await redis.sadd(keys.processing_index(worker_id), f"{pair}")
            await redis.lpush(keys.processing_list(pair, worker_id), entry)
            count += 1
        else:
            log.error("unreadable processing entry of %s dropped: %.200s", worker_id, entry)
        await redis.rpop(old)
    await redis.delete(old)
    return count


def _pair_of_entry(entry: str) -> Pair | None:
    try:
        data = json.loads(entry)
        if data.get("art") == "block":
            return Pair(str(data["user_id"]), str(data["character_id"]))
        event = json.loads(data["raw"])
        return Pair(str(event["user_id"]), str(event["character_id"]))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
