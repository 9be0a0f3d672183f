"""A worker process killed mid-turn (SIGKILL, no cleanup) leaves an orphaned processing
list; a live worker notices the missing heartbeat, adopts the orphans and ends every
turn in an outcome, frees the dead worker's gate slots and the pair's marker."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import post, script_answer

from novaberg.config import Settings
from novaberg.llm.gate import ModelGate
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import keys

SRC = Path(__file__).resolve().parents[3] / "src"
PAIR = Pair("anna", "nova")

DOOMED_WORKER = """
import asyncio, sys
from pathlib import Path
from novaberg.config import load_settings
from novaberg.events.worker import Worker
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder, ScriptedLLM
from novaberg.store.postgres import create_pool
from novaberg.store.redis_client import create_redis

async def main(redis_url, db_url, home, stall, gate_name):
    settings = load_settings(home=Path(home), redis_url=redis_url, database_url=db_url,
                             llm="scripted", embed_dim=384, pixie=False)
    redis = create_redis(redis_url, cluster=settings.redis_cluster)
    pool = await create_pool(db_url)
    llm = ScriptedLLM()
    # hang in the chosen half of the turn until the test kills this process
    if stall == "path1":
        llm.add(".*", {}, schema="PerceptionResult", latency_ms=600_000)
    else:
        llm.add("Antworte kurz und natürlich", "zu spät", latency_ms=600_000)
    model = ModelLayer(llm, ScriptedEmbedder(384))
    gate = ModelGate(redis, gate_name, 2, wait_seconds=10, lease_seconds=600)
    graphs = GraphRuntime(GraphDeps(settings, redis, pool, model))
    worker = Worker(redis, graphs, gate, worker_id="doomed", heartbeat_interval=0.2,
                    heartbeat_ttl=1.0, poll_interval=0.02)
    await worker.start()
    await asyncio.Event().wait()

asyncio.run(main(*sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("stall", "stage_graph", "stage_node"),
    [("path1", None, None), ("path2", "character", "conversation_vector")],
    ids=["killed in path 1", "killed in path 2"],
)
async def test_worker_killed_mid_turn_is_never_silent(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    gate: ModelGate,
    settings: Settings,
    endpoints: Endpoints,
    stall: str,
    stage_graph: str | None,
    stage_node: str | None,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    ids = []
    for text in ("Bist du da?", "Hallo?"):
        response = await post(http, anna, text)
        ids.append(response.json()["nachrichten_id"])
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "NOVABERG_REDIS_CLUSTER": str(endpoints.redis_cluster).lower(),
    }
    doomed = subprocess.Popen(
        [
            sys.executable,
            "-c",
            DOOMED_WORKER,
            endpoints.redis_url,
            endpoints.database_url,
            str(settings.home),
            stall,
            gate.backend,
        ],
        env=env,
    )
    try:
        if stage_node is None:  # Path 1 holds the gate and the block entry
            for _ in range(1500):
                if await redis.llen(keys.processing_list(PAIR, "doomed")) and await gate.held():
                    break
                await asyncio.sleep(0.02)
        else:
            await ws.wait_for(
                lambda m: m.get("node") == stage_node and m.get("graph") == stage_graph,
                timeout=60,
            )
        assert await redis.llen(keys.processing_list(PAIR, "doomed")) == 1
        assert await gate.held() == 1
    finally:
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(10)
    assert not ws.of("turn_gescheitert") and not ws.of("character_response")

    script_answer(scripted, "Jetzt bin ich da.")
    await workers()
    failed = await ws.wait_typ("turn_gescheitert")
    assert failed["nachrichten_ids"] == ids
    assert failed["grund"] == "worker_ausgefallen"
    for _ in range(250):  # the rescuer finishes its bookkeeping right after the message
        if not await redis.sismember(keys.worker_registry(), "doomed"):
            break
        await asyncio.sleep(0.02)
    assert not await redis.sismember(keys.worker_registry(), "doomed")
    assert not await redis.exists(keys.processing_list(PAIR, "doomed"))
    assert await gate.held() == 0, "the dead worker's gate slot is freed"
    assert not await redis.exists(keys.turn_marker(PAIR))

    again = await post(http, anna, "Und jetzt?")  # the pair is usable again
    answer = await ws.wait_typ("character_response")
    assert answer["nachrichten_ids"] == [again.json()["nachrichten_id"]]
    assert answer["nachricht"] == "Jetzt bin ich da."
    assert len(ws.of("turn_gescheitert")) == 1


async def test_a_dead_workers_background_slot_is_freed(
    workers, redis: aioredis.Redis, gate: ModelGate
) -> None:
    """A Pixie job's gate slot carries its worker's id: when that worker dies mid-job,
    the rescuer frees the slot at once instead of the gate staying blocked for its lease."""
    from novaberg.pixie.scheduler import JobContext

    doomed = JobContext(redis, None, None, gate=gate, worker_id="doomed")  # type: ignore[arg-type]
    slot = doomed.model_slot()
    token = await slot.__aenter__()  # the job holds the slot; its process is then killed
    assert token.startswith("doomed:") and await gate.held() == 1
    await redis.sadd(keys.worker_registry(), "doomed")  # registered, heartbeat gone

    rescuer = await workers()
    await rescuer.recover_orphans()
    assert await gate.held() == 0


async def test_a_worker_taken_for_dead_is_watched_again(workers, redis: aioredis.Redis) -> None:
    """Another worker removed it from the registry (it had stalled past its heartbeat);
    its next beat registers it again, so its turns are recovered if it really dies later."""
    worker = await workers()
    await redis.srem(keys.worker_registry(), worker.worker_id)
    for _ in range(100):
        if await redis.sismember(keys.worker_registry(), worker.worker_id):
            break
        await asyncio.sleep(0.02)
    assert await redis.sismember(keys.worker_registry(), worker.worker_id)
