"""End to end through `novaberg serve` (its own process, scripted model, settings
shortened): the user writes something sad and falls silent; the dispatcher's delegation
trigger sets a task, the `nachfragen` job turns it into a stack entry, delivery opens every
gate, and Nova's own thought arrives on the WebSocket — `reiz_herkunft: "eigener_impuls"`,
no `nachrichten_ids` — and is listed nowhere anymore."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from impulse_script import ENV, GREETING, IMPULSE_ANSWER, RULES, SAD, stance_fields
from websockets.asyncio.client import connect

from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import keys
from novaberg.store.users import issue_token

pytestmark = pytest.mark.timeout(240)

SRC = Path(__file__).resolve().parents[2] / "src"
WAIT = 60.0
"""Upper bound for anything the test waits for (a bound, not a timing assertion)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def serve(tmp_path: Path, endpoints: Endpoints) -> Iterator[str]:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES), encoding="utf-8")
    port = _free_port()
    log = tmp_path / "serve.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "NOVABERG_HOME": str(tmp_path),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_SCRIPT": str(rules),
        "NOVABERG_PORT": str(port),
        **ENV,
    }
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "novaberg.cli", "serve"], env=env, stdout=sink, stderr=sink
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            try:
                if httpx.get(f"{url}/web/style.css", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "novaberg serve did not come up"
            time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(40)
        except subprocess.TimeoutExpired:
            proc.kill()
        print(log.read_text(errors="replace")[-4000:])


async def _until(ws: Any, seen: list[dict[str, Any]], predicate: Any) -> dict[str, Any]:
    async def scan() -> dict[str, Any]:
        while True:
            message = json.loads(await ws.recv())
            seen.append(message)
            if predicate(message):
                return message

    return await asyncio.wait_for(scan(), WAIT)


async def test_sad_then_silent_receives_novas_own_thought(
    serve: str, db, redis: aioredis.Redis
) -> None:  # type: ignore[no-untyped-def]
    token = (await issue_token(db, "anna", "e2e")).token
    headers = {"Authorization": f"Bearer {token}"}
    pair = Pair("anna", "nova")
    seen: list[dict[str, Any]] = []
    async with (
        httpx.AsyncClient(base_url=serve, timeout=WAIT) as http,
        connect(f"{serve.replace('http', 'ws')}/ws?token={token}") as ws,
    ):
        await _until(ws, seen, lambda m: m.get("typ") == "verbindung")
        for text in (GREETING, SAD):
            sent = await http.post(
                "/chat", json={"character_id": "nova", "text": text}, headers=headers
            )
            assert sent.status_code == 202
            mine = sent.json()["nachrichten_id"]
            await _until(
                ws,
                seen,
                lambda m, mine=mine: (
                    m.get("typ") == "character_response" and mine in m["nachrichten_ids"]
                ),
            )
        # the stance node wrote its hash in these turns; the test fixes it to a warm one so
        # the closeness gate does not depend on the scripted model's landscape
        await redis.hset(keys.stance(pair), mapping=stance_fields(time.time()))
        # silence: Nova speaks on her own
        impulse = await _until(
            ws,
            seen,
            lambda m: (
                m.get("typ") == "character_response" and m.get("reiz_herkunft") == "eigener_impuls"
            ),
        )
        assert impulse["nachrichten_ids"] == []
        assert impulse["nachricht"] == IMPULSE_ANSWER
        assert impulse["turn_id"].startswith("impuls-")
        listing = (await http.get("/impulses", headers=headers)).json()

    assert listing["stapel"] == [], "the delivered entry left the stack"
    fired = [r for r in listing["protokoll"] if r["ergebnis"] == "gesendet"]
    assert len(fired) == 1 and fired[0]["turn_id"] == impulse["turn_id"]
    assert all(g["offen"] for g in fired[0]["tore"])
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT ergebnis, detail FROM hintergrund_log WHERE job = 'nachfragen' ORDER BY id"
        )
        runs = await cur.fetchall()
    print("nachfragen runs:", runs)
    assert [r["ergebnis"] for r in runs] == ["ok"] * len(runs)
    made = [r["detail"] for r in runs if r["detail"].get("eintrag")]
    assert len(made) == 1 and made[0]["emotionsvektor"] == "einbruch"
    outcomes = [m for m in seen if m.get("typ") in {"character_response", "turn_gescheitert"}]
    assert len(outcomes) == 3, "two answers and one impulse, nothing else"
