"""One user's flood must not delay another user's answer by more than the model gate dictates.

`novaberg serve` (intake, delivery and consumers in one process, as a newcomer runs it) with
the scripted model: every turn's answer takes `--latency` ms of "model time", the gate has
`--slots` slots. User B sends `--messages` messages one after another and waits for each
answer over its WebSocket (time from POST to `character_response`). Measured twice in the
same run: quiet, then while user A floods `POST /chat` from `--flooders` connections as fast
as they are answered (A's token bucket refuses most with 429; what A gets through becomes
A's turns). A pair runs one turn at a time, so A holds at most one gate slot: with two or
more slots the gate dictates no wait for B, with one slot at most one of A's turns.

    .venv/bin/python bench/fairness.py [--messages 8] [--latency 300] [--slots 2]
        [--flooders 16]

Runs its own embedded Valkey and PostgreSQL under a fresh directory in /tmp. Prints one
JSON line per phase and a summary; a failed measurement prints null, never a number.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SRC = Path(__file__).resolve().parent.parent / "src"
RESPONDER = r"Antworte kurz und natürlich"
"""Matches only the responder's prompt (prompts/responder.txt)."""

APPROVE = {"score": 0.05, "direktiven_score": 0.05, "begruendung": ""}
ANSWER_TIMEOUT = 120.0


def rules(latency_ms: int) -> list[dict[str, Any]]:
    """Plain conversation, the tribunal approves, the answer takes `latency_ms`."""
    conversation = {"needs_memory": True, "momentum": "mid", "management_action": ""}
    verdicts = ("JuristVerdict", "PsychologistVerdict", "EthicistVerdict")
    thinker = {"ergebnis": "OK", "probleme": "", "korrigierte_antwort": ""}
    return [
        {"match": ".*", "schema": "RouterDecision", "output": conversation},
        *({"match": ".*", "schema": name, "output": APPROVE} for name in verdicts),
        {"match": ".*", "schema": "ThinkerCheck", "output": thinker},
        {"match": RESPONDER, "output": "Eine Antwort.", "latency_ms": latency_ms},
    ]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


async def issue(database_url: str, user: str) -> str:
    from novaberg.store.postgres import create_pool
    from novaberg.store.users import issue_token

    pool = await create_pool(database_url, max_size=1)
    try:
        return (await issue_token(pool, user, "bench")).token
    finally:
        await pool.close()


async def ask(url: str, token: str, ws: Any, text: str) -> float | None:
    """Seconds from POST to the answer naming the message; None if it failed."""
    import httpx

    began = time.monotonic()
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        response = await http.post(
            "/chat",
            json={"character_id": "nova", "text": text},
            headers={"Authorization": f"Bearer {token}"},
        )
    if response.status_code != 202:
        log(f"B's message refused: {response.status_code} {response.text}")
        return None
    mid = response.json()["nachrichten_id"]
    try:
        async with asyncio.timeout(ANSWER_TIMEOUT):
            while True:
                message = json.loads(await ws.recv())
                if mid in (message.get("nachrichten_ids") or []):
                    if message.get("typ") == "character_response":
                        return time.monotonic() - began
                    if message.get("typ") == "turn_gescheitert":
                        log(f"B's turn failed: {message.get('grund')}")
                        return None
    except TimeoutError:
        return None


async def flood(url: str, token: str, connections: int, stop: asyncio.Event) -> dict[str, int]:
    import httpx

    counts: dict[str, int] = {}
    body = {"character_id": "nova", "text": "Flut " + "x" * 2000}

    async def one() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            while not stop.is_set():
                try:
                    response = await http.post(
                        "/chat", json=body, headers={"Authorization": f"Bearer {token}"}
                    )
                    key = str(response.status_code)
                except httpx.HTTPError as exc:
                    key = type(exc).__name__
                counts[key] = counts.get(key, 0) + 1

    await asyncio.gather(*(one() for _ in range(connections)))
    return counts


async def chat(url: str, token: str, stop: asyncio.Event) -> int:
    """A as a normal person: one message, wait for its answer, the next. Answers counted."""
    from websockets.asyncio.client import connect

    ws_url = url.replace("http://", "ws://") + "/ws"
    answered = 0
    async with connect(f"{ws_url}?token={token}", max_size=None) as ws:
        await ws.recv()
        while not stop.is_set():
            if await ask(url, token, ws, f"Plaudern {answered}") is not None:
                answered += 1
    return answered


def summary(times: list[float | None]) -> dict[str, Any]:
    done = [t for t in times if t is not None]
    failed = len(times) - len(done)
    if failed or not done:
        return {"answers": len(done), "failed": failed, "p50_s": None, "max_s": None}
    return {
        "answers": len(done),
        "failed": 0,
        "p50_s": round(statistics.median(done), 3),
        "max_s": round(max(done), 3),
    }


async def measure(url: str, tokens: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    from websockets.asyncio.client import connect

    ws_url = url.replace("http://", "ws://") + "/ws"
    async with connect(f"{ws_url}?token={tokens['b']}", max_size=None) as ws:
        await ws.recv()
        await ask(url, tokens["b"], ws, "Aufwärmen")  # first turn of the pair: not measured
        quiet = [await ask(url, tokens["b"], ws, f"Ruhig {n}") for n in range(args.messages)]
        quiet_summary = summary(quiet)
        print(json.dumps({"phase": "quiet", **quiet_summary}), flush=True)
        stop_chat = asyncio.Event()
        chatting = asyncio.create_task(chat(url, tokens["a"], stop_chat))
        await asyncio.sleep(1.0)
        busy = [await ask(url, tokens["b"], ws, f"Neben A {n}") for n in range(args.messages)]
        stop_chat.set()
        chat_summary = summary(busy)
        print(json.dumps({"phase": "a_chats", **chat_summary, "a_answers": await chatting}))
        stop = asyncio.Event()
        flooding = asyncio.create_task(flood(url, tokens["a"], args.flooders, stop))
        await asyncio.sleep(2.0)  # the flood is under way (A's bucket is empty by now)
        began = time.monotonic()
        loud = [await ask(url, tokens["b"], ws, f"Laut {n}") for n in range(args.messages)]
        seconds = time.monotonic() - began
        stop.set()
        counts = await flooding
        loud_summary = summary(loud)
        sent = sum(counts.values())
        print(
            json.dumps(
                {
                    "phase": "flood",
                    **loud_summary,
                    "flood_requests": sent,
                    "flood_per_s": round(sent / (seconds + 2.0), 1),
                    "flood_answers": counts,
                }
            ),
            flush=True,
        )
    return {
        "quiet": quiet_summary,
        "a_chats": chat_summary,
        "flood": loud_summary,
        "flood_answers": counts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=8, help="B's measured messages")
    parser.add_argument("--latency", type=int, default=300, help="ms of model time per answer")
    parser.add_argument("--slots", type=int, default=2, help="model gate slots")
    parser.add_argument("--flooders", type=int, default=16, help="A's connections")
    args = parser.parse_args()

    sys.path.insert(0, str(SRC))
    from novaberg.config import load_settings
    from novaberg.runtime.services import EmbeddedServices

    home = Path(tempfile.mkdtemp(prefix="novaberg-bench-fairness-"))
    services = EmbeddedServices(load_settings(home=home, llm="scripted", pixie=False))
    endpoints = services.start()
    script = home / "rules.json"
    script.write_text(json.dumps(rules(args.latency)), encoding="utf-8")
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "NOVABERG_HOME": str(home),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_SCRIPT": str(script),
        "NOVABERG_PIXIE": "false",
        "NOVABERG_PORT": str(port),
        "NOVABERG_MODEL_SLOTS": str(args.slots),
        "NOVABERG_LOG_LEVEL": "WARNING",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "novaberg.cli", "serve"], env=env, stdout=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    result: dict[str, Any] | None = None
    try:
        import httpx

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and server.poll() is None:
            try:
                if httpx.get(f"{url}/web/style.css", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        tokens = {u: asyncio.run(issue(endpoints.database_url, u)) for u in ("a", "b")}
        log(f"serve up on {url}; measuring {args.messages} answers quiet, then under flood")
        result = asyncio.run(measure(url, tokens, args))
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
        services.stop()
        shutil.rmtree(home, ignore_errors=True)
    quiet, loud = (result or {}).get("quiet", {}), (result or {}).get("flood", {})
    busy = (result or {}).get("a_chats", {})
    q50, b50, l50 = quiet.get("p50_s"), busy.get("p50_s"), loud.get("p50_s")
    delay = None if q50 is None or l50 is None else round(l50 - q50, 3)
    bound = 0.0 if args.slots >= 2 else args.latency / 1000
    print(
        f"\nB's time to answer ({args.messages} messages, model {args.latency} ms/answer, "
        f"{args.slots} gate slots), same run:\n"
        f"  alone:                 p50 {q50} s  max {quiet.get('max_s')} s\n"
        f"  A chats beside B:      p50 {b50} s  max {busy.get('max_s')} s\n"
        f"  A floods beside B:     p50 {l50} s  max {loud.get('max_s')} s  (delay p50 {delay} s)\n"
        f"the gate dictates about {bound:g} s (a pair holds at most one slot, A's refused "
        f"requests cost a token check); the rest is CPU shared with A's running turn, as "
        f"when A only chats, plus A's larger blocks"
    )
    answers = (result or {}).get("flood_answers")
    print(f"A's flood answered: {answers}")


if __name__ == "__main__":
    main()
