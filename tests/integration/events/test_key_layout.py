"""An installation from before the hash tags keeps its data: the first start renames every
old-format key to its tagged name (store/key_layout.py), once, and turns run on."""

from __future__ import annotations

import json
import re

import httpx
import redis.asyncio as aioredis
from event_helpers import post, script_answer

from novaberg.events.model import MSG_RESPONSE
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.key_layout import ensure_layout, new_name
from novaberg.store.short_term import ShortTermStore

PAIR = Pair("anna", "nova")


def old_name(key: str) -> str:
    """The name a key had before the hash tags."""
    for fixed in (":{bereit}", ":{kanal}", ":{arbeiter}", ":{pixie}"):
        key = key.replace(fixed, "")
    return re.sub(r"\{([^}]*)\}", r"\1", key)


def test_old_names_map_to_the_tagged_ones() -> None:
    assert new_name("prompt_queue:anna:nova") == keys.prompt_queue(PAIR)
    assert new_name("kzg:anna:nova:1700") == keys.short_term_entry(PAIR, 1700)
    assert new_name("session:anna:nova:turns") == keys.session_turns(PAIR)
    assert new_name("gv:detail:anna:nova") == keys.hypothesis_detail(PAIR)
    assert new_name("zustellung_log:anna") == keys.delivery_log("anna")
    assert new_name("queue:anna:arbeit") == keys.promotion_working("anna")
    assert new_name("kanal_gesendet:anna:4:2") == keys.channel_sent("anna", 4, 2)
    assert new_name("aktive_paare") == keys.active_pairs()
    assert new_name("bereit_genommen:w1") == keys.ready_taken("w1")
    assert new_name("graph_run_lock:b:nutzer_wartet") == keys.model_gate_waiting("b")
    assert new_name("pixie:schedule:konsolidierung") == keys.pixie_schedule("konsolidierung")
    for tagged in (keys.prompt_queue(PAIR), keys.delivery_log("anna"), keys.active_pairs()):
        assert new_name(tagged) is None, "a tagged key keeps its name"
    assert new_name("worker_alive:w1") is None and new_name("queue_nutzer") is None


def test_a_user_id_with_a_brace_cannot_pick_another_slot() -> None:
    for bad in ("an{na", "an}na"):
        try:
            keys.prompt_queue(Pair(bad, "nova"))
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was accepted")


async def test_old_keys_are_renamed_once_and_the_queued_turn_runs(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Schön, dass du wieder da bist.")
    sent = await post(http, anna, "Bin wieder da")  # queued: no worker runs yet
    message_id = sent.json()["nachrichten_id"]
    # what the old layout held besides the queue
    entry = "kzg:anna:nova:1700000000000"
    await ShortTermStore(redis).create(  # renamed to its old name below, with its index
        PAIR,
        {"inhalt": "Anna segelt gern."},
        [0.1] * 384,
        ttl_seconds=86_400,
        epoch_ms=1700000000000,
    )
    await redis.hset("nova_state:anna:nova", mapping={"stimmung": "ruhig"})
    await redis.rpush("session:anna:nova:turns", json.dumps({"rolle": "user", "text": "Hi"}))
    await redis.set("zustellung_seq:anna", 41)
    await redis.zadd("zustellung_log:anna", {'{"seq":41,"typ":"alt"}': 41})
    await redis.rpush("queue:anna", json.dumps({"key": entry}))
    await redis.rpush(
        "event_processing:alt-worker",
        json.dumps({"art": "block", "turn_id": "t0", "user_id": "anna", "character_id": "x"}),
    )
    async for key in redis.scan_iter(count=500):  # the queue, the entry, as they were
        if old_name(str(key)) != str(key):
            await redis.rename(key, old_name(str(key)))
    index = "kzg_index:anna:nova"
    await redis.delete(index)
    await redis.sadd(index, entry)  # the old index named the entry by its old key
    await redis.delete(keys.layout_version())
    assert await redis.llen("prompt_queue:anna:nova") == 1

    await workers()

    assert await redis.get(keys.layout_version()) == str(keys.LAYOUT_VERSION)
    new_entry = keys.short_term_entry(PAIR, 1700000000000)
    assert await redis.hget(new_entry, "inhalt") == "Anna segelt gern."
    assert await redis.smembers(keys.short_term_index(PAIR)) == {new_entry}
    assert await redis.hget(keys.nova_state(PAIR), "stimmung") == "ruhig"
    assert await redis.llen(keys.session_turns(PAIR)) >= 1
    assert json.loads((await redis.lrange(keys.promotion_queue("anna"), 0, 0))[0]) == {
        "key": new_entry
    }
    assert await redis.sismember(keys.processing_index("alt-worker"), "anna:x")
    leftovers = [str(k) async for k in redis.scan_iter(count=500) if new_name(str(k))]
    assert leftovers == [], "no key of the old layout is left"
    assert not await redis.exists("event_processing:alt-worker")

    answer = await ws.wait_typ(MSG_RESPONSE)
    assert answer["nachrichten_ids"] == [message_id]
    assert answer["seq"] > 41, "the delivery numbering goes on where it was"

    # once: a second start finds the mark and renames nothing (an old-looking key stays)
    await redis.set("momentum:anna:nova", "mid")
    await ensure_layout(redis)
    assert await redis.exists("momentum:anna:nova")
