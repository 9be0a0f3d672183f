"""Memory of `novaberg api` when WebSocket clients stop reading, and after they are gone.

One user opens `--sockets` WebSockets that stop reading after the greeting (tiny receive
buffer, no compression: the worst case), then `--messages` messages of `--size` bytes of
incompressible text are delivered to that user (as workers deliver: Redis, numbered,
published). The API process's resident memory (VmRSS) is read before, at its peak, after
the server gave the sockets up, and after the clients are gone; then the clients read again
and report the close code each got (4408 = closed as too slow). A measurement that failed
prints null.

    .venv/bin/python bench/slow_sockets.py [--sockets 20] [--messages 200] [--size 16384]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SRC = Path(__file__).resolve().parent.parent / "src"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def stalled_socket(port: int) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    return sock


async def run(port: int, pid: int, redis_url: str, token: str, args: Any) -> dict[str, Any]:
    import redis.asyncio as aioredis
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from novaberg.events.delivery import Delivery
    from novaberg.events.model import StageMessage

    result: dict[str, Any] = {"rss_before_mb": rss_mb(pid)}
    url = f"ws://127.0.0.1:{port}/ws?token={token}"
    clients = []
    for _ in range(args.sockets):
        ws = await connect(url, sock=stalled_socket(port), max_queue=1, compression=None)
        await ws.recv()  # the greeting; then the client stops reading
        clients.append(ws)
    result["rss_connected_mb"] = rss_mb(pid)
    redis = aioredis.from_url(redis_url, decode_responses=True)
    sender = Delivery(redis)
    peak = 0.0
    for n in range(args.messages):
        text = base64.b64encode(os.urandom(args.size * 3 // 4)).decode()  # incompressible
        await sender.send(
            "slow",
            StageMessage(
                character_id="nova", turn_id=f"t{n}", node="router", label=text, graph="human"
            ),
        )
        peak = max(peak, rss_mb(pid) or 0.0)
        await asyncio.sleep(0.005)
    for _ in range(20):  # let the server take in what it was sent
        await asyncio.sleep(0.25)
        peak = max(peak, rss_mb(pid) or 0.0)
    await redis.aclose()
    result["rss_peak_mb"] = peak or None
    result["rss_stalled_after_mb"] = rss_mb(pid)
    codes: Counter[str] = Counter()

    async def drain(ws: Any) -> None:
        try:
            async with asyncio.timeout(60):
                while True:
                    await ws.recv()
        except ConnectionClosed as closed:
            codes[str(closed.rcvd.code if closed.rcvd else None)] += 1
        except TimeoutError:
            codes["still open"] += 1
            await ws.close()

    await asyncio.gather(*(drain(ws) for ws in clients))  # reading again
    await asyncio.sleep(2.0)
    result["rss_after_close_mb"] = rss_mb(pid)
    result["close_codes"] = dict(codes)
    return result


async def issue(database_url: str) -> str:
    from novaberg.store.postgres import create_pool
    from novaberg.store.users import issue_token

    pool = await create_pool(database_url, max_size=1)
    try:
        return (await issue_token(pool, "slow", "bench")).token
    finally:
        await pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=20)
    parser.add_argument("--messages", type=int, default=400, help="more than the 4 MiB budget")
    parser.add_argument("--size", type=int, default=16_384, help="bytes of text per message")
    args = parser.parse_args()
    sys.path.insert(0, str(SRC))
    from novaberg.config import load_settings
    from novaberg.runtime.services import EmbeddedServices

    home = Path(tempfile.mkdtemp(prefix="novaberg-bench-slow-"))
    services = EmbeddedServices(load_settings(home=home, llm="scripted", pixie=False))
    endpoints = services.start()
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "NOVABERG_HOME": str(home),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_PIXIE": "false",
        "NOVABERG_PORT": str(port),
        "NOVABERG_LOG_LEVEL": "WARNING",
        "NOVABERG_MAX_SOCKETS_PER_USER": str(max(20, args.sockets)),
    }
    api = subprocess.Popen([sys.executable, "-m", "novaberg.cli", "api"], env=env)
    result: dict[str, Any] = {}
    try:
        import httpx

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and api.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/web/style.css", timeout=1).is_success:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        token = asyncio.run(issue(endpoints.database_url))
        result = asyncio.run(run(port, api.pid, endpoints.redis_url, token, args))
    finally:
        api.send_signal(signal.SIGTERM)
        try:
            api.wait(60)
        except subprocess.TimeoutExpired:
            api.kill()
        services.stop()
        shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(result), flush=True)
    total = args.messages * args.size / 1e6
    print(
        f"\n{args.sockets} stalled sockets, {args.messages} x {args.size} B ({total:.1f} MB "
        f"per socket offered): api RSS before {result.get('rss_before_mb')} MB, peak "
        f"{result.get('rss_peak_mb')} MB, stalled {result.get('rss_stalled_after_mb')} MB, "
        f"after close {result.get('rss_after_close_mb')} MB; close codes "
        f"{result.get('close_codes')}"
    )


if __name__ == "__main__":
    main()
