"""Scale-out as shipped: `novaberg api` and two `novaberg worker` processes against one
Redis and one PostgreSQL. Workers publish, the API process delivers; two workers never
run two turns of one pair at once, and a superseded turn's ids cross workers intact."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from event_helpers import APPROVE, CONVERSATION, RESPONDER, Socket, free_port
from websockets.asyncio.client import connect

from novaberg.runtime.services import Endpoints

SRC = Path(__file__).resolve().parents[3] / "src"

RULES = (
    [
        {"match": ".*", "schema": "RouterDecision", "output": CONVERSATION},
    ]
    + [
        {"match": ".*", "schema": name, "output": APPROVE}
        for name in ("JuristVerdict", "PsychologistVerdict", "EthicistVerdict")
    ]
    + [
        {
            "match": ".*",
            "schema": "ThinkerCheck",
            "output": {"ergebnis": "OK", "probleme": "", "korrigierte_antwort": ""},
        },
        # the first answer takes its time, so the test's next two messages surely arrive
        # before it leaves (on a loaded machine a stage reaches the socket late)
        {
            "match": f"(?s)Erste Nachricht.*{RESPONDER}|{RESPONDER}.*Erste Nachricht",
            "output": "Antwort aus einem Worker.",
            "latency_ms": 3000,
            "times": 1,
        },
        {"match": RESPONDER, "output": "Antwort aus einem Worker.", "latency_ms": 400},
    ]
)


@pytest.fixture
def cluster(tmp_path: Path, endpoints: Endpoints) -> Iterator[str]:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES), encoding="utf-8")
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "NOVABERG_HOME": str(tmp_path),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_REDIS_CLUSTER": str(endpoints.redis_cluster).lower(),
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_SCRIPT": str(rules),
        "NOVABERG_EMBED_DIM": "384",
        "NOVABERG_PIXIE": "false",
        "NOVABERG_FOLLOW_UPS": "false",
        "NOVABERG_PORT": str(port),
        "NOVABERG_LOG_LEVEL": "WARNING",
    }
    procs = [
        subprocess.Popen([sys.executable, "-m", "novaberg.cli", command], env=env)
        for command in ("api", "worker", "worker")
    ]
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert all(p.poll() is None for p in procs), "a process exited early"
            try:
                if httpx.get(f"{url}/web/style.css", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "novaberg api did not come up"
            time.sleep(0.2)
        yield url
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(40)
            except subprocess.TimeoutExpired:
                proc.kill()


async def test_api_and_two_workers_answer_every_message_one_turn_per_pair(
    cluster: str, token
) -> None:
    users = {"anna": await token("anna"), "bob": await token("bob")}
    ws_url = cluster.replace("http://", "ws://") + "/ws"
    sockets = {u: Socket(await connect(f"{ws_url}?token={t}")) for u, t in users.items()}
    for sock in sockets.values():
        await sock.wait_typ("verbindung")
    sent: dict[str, list[str]] = {"anna": [], "bob": []}
    async with httpx.AsyncClient(base_url=cluster, timeout=30) as http:

        async def say(user: str, text: str) -> None:
            response = await http.post(
                "/chat",
                json={"character_id": "nova", "text": text},
                headers={"Authorization": f"Bearer {users[user]}"},
            )
            assert response.status_code == 202, response.text
            sent[user].append(response.json()["nachrichten_id"])

        await say("anna", "Erste Nachricht")
        await say("bob", "Hallo von Bob")
        await sockets["anna"].wait_for(lambda m: m.get("node") == "router")
        await say("anna", "Zweite, während der erste Turn läuft")
        await say("anna", "Dritte")
        for user, sock in sockets.items():
            await sock.wait_for(
                lambda m, user=user: (
                    m.get("typ") == "character_response" and sent[user][-1] in m["nachrichten_ids"]
                ),
                timeout=60,
            )
    for user, sock in sockets.items():
        answered = [i for m in sock.of("character_response") for i in m["nachrichten_ids"]]
        assert sorted(answered) == sorted(sent[user]), f"{user}: every id answered exactly once"
        assert not sock.of("turn_gescheitert")
        # one turn per pair at a time: a turn's stages never resume after the next began
        order = [m["turn_id"] for m in sock.seen if m.get("typ") == "character_stage"]
        finished: set[str] = set()
        for previous, current in itertools.pairwise(order):
            if current != previous:
                finished.add(previous)
            assert current not in finished, f"{user}: turns of one pair overlapped"
    # written on before turn 1's answer left: turn 1 is superseded, one answer names all
    anna = sockets["anna"].of("character_response")
    assert [m["nachrichten_ids"] for m in anna] == [sent["anna"]]
    assert any(m.get("node") == "superseded" for m in sockets["anna"].seen)
    for sock in sockets.values():
        await sock.close()
