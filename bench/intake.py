"""Intake throughput and latency: `POST /chat` of the real app next to a bare FastAPI endpoint.

Both servers run the same way, each in its own process (uvicorn, httptools, uvloop, one
worker, access log off) on 127.0.0.1. The real endpoint does everything it does in
production: bearer-token auth (in-process cache), body validation, character check
(cached), one atomic Redis script (RPUSH + EXPIRE + SADD) before it answers 202. The bare
endpoint parses nothing and returns a constant of the same shape: the ceiling of the
framework on this machine. No consumers run, so no model is involved.

The load generator is a third process per measurement (this file with `--generate`):
raw keep-alive HTTP/1.1 over asyncio protocols, no HTTP library, so the client — which
shares the cores with the servers and Valkey — stays cheap. Both servers are measured by
the same generator, interleaved at every level (several rounds, median reported), so
load from neighbours on a shared machine hits both alike.

Two kinds of load:
- open loop (the latency goal): a fixed offered rate (default 1,000 msg/s) spread over C
  connections, at several C. A request is due every 1/rate s whether or not earlier ones
  were answered (a busy connection sends it as soon as it is free), and latency counts
  from the due time — no coordinated omission. That includes the generator's own timer
  slop (up to ~1 ms); the latency from the actual send is reported beside it.
- closed loop (the throughput ceiling): C connections, each sending its next request
  when the last one was answered.

Besides latency, each record carries the server's CPU time per request (from
/proc/<pid>/stat: independent of what neighbours do to wall-clock numbers) and the
generator's own CPU per request.

A measurement that failed (generator crashed, connection refused, a non-202 answer)
shows as failed: its numbers are null and the goals are not met, never a plausible value.

Goal (issue #4): p99 ≤ 5 ms at ≥ 1,000 msg/s, and ≥ 50 % of the bare endpoint's
throughput.

    .venv/bin/python bench/intake.py [--rounds 3] [--rate 1000] [--seconds 3]
        [--open 8,32,128] [--closed 1,16,64] [--requests 3000]

Runs its own embedded Valkey and PostgreSQL under a fresh directory in /tmp.
Prints one JSON line per measurement, a JSON summary, then a table.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _machine import cpu_times, steal_percent

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SRC = Path(__file__).resolve().parent.parent / "src"

GOAL_P99_MS = 5.0
GOAL_RATE = 1000.0
GOAL_RATIO = 0.5
"""Issue #4: p99 ≤ 5 ms at ≥ 1,000 msg/s, ≥ 50 % of a bare FastAPI endpoint."""

RATE_TOLERANCE = 0.98
"""An open-loop run 'reaches' the offered rate if it completes at ≥ 98 % of it."""

GENERATOR_TIMEOUT = 120.0

BARE_SERVER = """
import sys, time, uuid
import uvicorn
from fastapi import FastAPI, Request, Response

app = FastAPI()

@app.post("/chat", status_code=202)
async def chat(request: Request) -> Response:
    await request.body()
    body = '{"nachrichten_id":"%s","empfangen_am":%r}' % (uuid.uuid4().hex, time.time())
    return Response(body, status_code=202, media_type="application/json")

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
            access_log=False, http="httptools", loop="uvloop")
"""

REAL_SERVER = """
import logging, sys
import uvicorn
from novaberg.api.app import create_app
from novaberg.config import load_settings
from novaberg.runtime.services import Endpoints

port, home, redis_url, db_url = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
# one token sends everything: its bucket is set out of reach, so the check runs on every
# request but never refuses (the limit's cost is measured, not its refusals)
settings = load_settings(home=home, redis_url=redis_url, database_url=db_url, llm="scripted",
                         pixie=False, host="127.0.0.1", port=port, log_level="WARNING",
                         chat_rate=1e9, chat_burst=10**9)
app = create_app(settings, endpoints=Endpoints(redis_url, db_url), consumers=False,
                 freeze_heap=True)
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False,
            http="httptools", loop="uvloop")
"""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def emit(record: dict[str, Any]) -> None:
    print(json.dumps(record, ensure_ascii=False), flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(sorted_values: list[float], q: float) -> float | None:
    """Nearest-rank percentile; None when there is nothing to rank."""
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return round(sorted_values[index], 3)


# --- the load generator (runs as its own process; imports nothing of novaberg) -----------


def chat_request(port: int, token: str) -> bytes:
    body = json.dumps({"character_id": "nova", "text": "Hallo Nova, wie geht's dir heute?"})
    return (
        f"POST /chat HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n{body}"
    ).encode()


class Client(asyncio.Protocol):
    """One keep-alive connection, one request in flight; later ones wait in `backlog`.

    Responses are parsed just enough to find their end (status line, Content-Length)."""

    def __init__(self, raw: bytes, results: Results) -> None:
        self.raw = raw
        self.results = results
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.in_flight: tuple[float, float] | None = None  # (due, sent)
        self.backlog: collections.deque[float] = collections.deque()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no subclass
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def submit(self, due: float) -> None:
        if self.in_flight is None:
            self._send(due)
        else:
            self.backlog.append(due)

    def _send(self, due: float) -> None:
        assert self.transport is not None
        self.in_flight = (due, time.perf_counter())
        self.transport.write(self.raw)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end]).lower()
            length = 0
            at = head.find(b"content-length:")
            if at >= 0:
                stop = head.find(b"\r\n", at)
                length = int(head[at + 15 : stop if stop >= 0 else len(head)])
            if len(self.buffer) < end + 4 + length:
                return
            status = int(head[9:12])
            del self.buffer[: end + 4 + length]
            done = time.perf_counter()
            if self.in_flight is None:
                self.results.errors += 1  # an answer nobody asked for
                continue
            due, sent = self.in_flight
            self.in_flight = None
            self.results.add(done, due, sent, status)
            if self.backlog:
                self._send(self.backlog.popleft())


class Results:
    def __init__(self) -> None:
        self.from_due: list[float] = []
        self.from_send: list[float] = []
        self.errors = 0  # answers other than 202 (and answers nobody asked for)
        self.accepted = 0  # 202 answers, warm-up included: each is a queued utterance
        self.last_done = 0.0

    def add(self, done: float, due: float, sent: float, status: int) -> None:
        self.from_due.append((done - due) * 1000)
        self.from_send.append((done - sent) * 1000)
        self.errors += status != 202
        self.accepted += status == 202
        self.last_done = done


async def _connect(port: int, raw: bytes, results: Results, count: int) -> list[Client]:
    loop = asyncio.get_running_loop()
    clients: list[Client] = []
    for _ in range(count):
        _transport, client = await loop.create_connection(
            lambda: Client(raw, results), "127.0.0.1", port
        )
        clients.append(client)
    return clients


async def _warm(clients: list[Client], results: Results) -> None:
    """One request per connection, not counted (fills the server's caches)."""
    for client in clients:
        client.submit(time.perf_counter())
    deadline = time.perf_counter() + 10
    while any(c.in_flight is not None for c in clients):
        if time.perf_counter() > deadline:
            results.errors += 1
            return
        await asyncio.sleep(0.001)
    if results.errors:
        return
    results.from_due.clear()
    results.from_send.clear()


async def _sleep_until(when: float) -> None:
    delay = when - time.perf_counter()
    if delay > 0:
        # never below 1 ms: a shorter timer rounds to 0 in uvloop and would spin
        await asyncio.sleep(max(delay, 0.001))


async def open_loop(port: int, raw: bytes, connections: int, rate: float, seconds: float) -> dict:
    results = Results()
    clients = await _connect(port, raw, results, connections)
    await _warm(clients, results)
    if results.errors:
        return {"warmup_errors": results.errors, "accepted": results.accepted}
    total = int(rate * seconds)
    interval = 1.0 / rate
    cpu0 = time.process_time()
    start = time.perf_counter() + 0.01
    n = 0
    while n < total:
        await _sleep_until(start + n * interval)
        now = time.perf_counter()
        while n < total and start + n * interval <= now:
            clients[n % connections].submit(start + n * interval)
            n += 1
    deadline = time.perf_counter() + 30  # a lost connection leaves requests unanswered
    while len(results.from_due) < total and time.perf_counter() < deadline:
        await asyncio.sleep(0.005)
    cpu = time.process_time() - cpu0
    _close(clients)
    return _summary(results, total, start, cpu)


async def closed_loop(port: int, raw: bytes, connections: int, requests: int) -> dict:
    results = Results()
    clients = await _connect(port, raw, results, connections)
    await _warm(clients, results)
    if results.errors:
        return {"warmup_errors": results.errors, "accepted": results.accepted}
    total = max(connections, requests - requests % connections)
    cpu0 = time.process_time()
    start = time.perf_counter()
    for client in clients:  # each connection keeps its own queue full
        for _ in range(total // connections):
            client.backlog.append(start)
        client._send(client.backlog.popleft())
    deadline = time.perf_counter() + 60
    while len(results.from_due) < total and time.perf_counter() < deadline:
        await asyncio.sleep(0.005)
    cpu = time.process_time() - cpu0
    _close(clients)
    record = _summary(results, total, start, cpu)
    # closed loop: 'from due' is meaningless (all were due at the start)
    record["p50_ms"], record["p99_ms"] = (
        record.pop("p50_from_send_ms"),
        record.pop("p99_from_send_ms"),
    )
    return record


def _close(clients: list[Client]) -> None:
    for client in clients:
        if client.transport is not None:
            client.transport.close()


def _summary(results: Results, total: int, start: float, cpu: float) -> dict:
    done = len(results.from_due)
    elapsed = results.last_done - start if done else 0.0
    from_due, from_send = sorted(results.from_due), sorted(results.from_send)
    return {
        "requests": total,
        "answered": done,
        "accepted": results.accepted,
        "errors": results.errors + (total - done),
        "rate": round(done / elapsed, 1) if elapsed > 0 else None,
        "p50_ms": percentile(from_due, 0.50),
        "p99_ms": percentile(from_due, 0.99),
        "p50_from_send_ms": percentile(from_send, 0.50),
        "p99_from_send_ms": percentile(from_send, 0.99),
        "client_cpu_us_per_req": round(cpu / done * 1e6, 1) if done else None,
    }


def generate(args: argparse.Namespace) -> None:
    """`--generate`: one measurement against one server, printed as one JSON line."""
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    raw = chat_request(args.port, args.token)
    if args.mode == "open":
        job = open_loop(args.port, raw, args.connections, args.rate, args.seconds)
    else:
        job = closed_loop(args.port, raw, args.connections, args.requests)
    print(json.dumps(asyncio.run(job)), flush=True)


# --- the orchestrator -----------------------------------------------------------------------


def start_server(code: str, *args: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen([sys.executable, "-c", code, str(port), *args], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


FAILED = {
    "rate": None,
    "p50_ms": None,
    "p99_ms": None,
    "p50_from_send_ms": None,
    "p99_from_send_ms": None,
}


def run_generator(
    server: subprocess.Popen[bytes], port: int, token: str, mode: str, connections: int, args: Any
) -> dict[str, Any]:
    """One measurement in a fresh generator process; a failure becomes a record of Nones."""
    command = [
        sys.executable,
        __file__,
        "--generate",
        f"--port={port}",
        f"--token={token}",
        f"--mode={mode}",
        f"--connections={connections}",
        f"--rate={args.rate}",
        f"--seconds={args.seconds}",
        f"--requests={args.requests}",
    ]
    before = cpu_seconds(server.pid)
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=GENERATOR_TIMEOUT, check=False
        )
        record = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
        last = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
        problem = None if record else f"generator failed ({done.returncode}): {last}"
    except (subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        record, problem = {}, f"generator failed: {type(exc).__name__}"
    used = cpu_seconds(server.pid) - before
    if "warmup_errors" in record:
        problem = f"{record['warmup_errors']} warm-up request(s) not answered 202"
    if problem is None and record.get("errors"):
        problem = f"{record['errors']} request(s) not answered 202 or not answered"
    if problem is not None:
        record = {**record, **FAILED, "failed": problem}
    answered = record.get("answered") or 0
    record["server_cpu_us_per_req"] = (
        round(used / (answered + connections) * 1e6, 1) if problem is None and answered else None
    )
    record.update(mode=mode, connections=connections)
    if mode == "open":
        record["target_rate"] = args.rate
    return record


def _median(records: list[dict[str, Any]], key: str, best_high: bool) -> dict[str, Any]:
    """The median round by `key`; any failed round makes the level failed (no hiding)."""
    failed = [r for r in records if r.get("failed")]
    if failed:
        return {**failed[0], "median_of": len(records), "failed_rounds": len(failed)}
    ranked = sorted(records, key=lambda r: r[key], reverse=best_high)
    median = dict(ranked[len(ranked) // 2])
    median["median_of"] = len(records)
    return median


def measure(
    servers: dict[str, tuple[subprocess.Popen[bytes], int]], token: str, args: Any
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int]]:
    """Every level for both servers; returns the median records and, per server, how many
    202 answers it gave in all rounds (each one a queued utterance for the intake)."""
    loads = [("open", c) for c in args.open] + [("closed", c) for c in args.closed]
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in servers}
    accepted = dict.fromkeys(servers, 0)
    for mode, connections in loads:
        rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in servers}
        for round_no in range(args.rounds):
            order = list(servers) if round_no % 2 == 0 else list(reversed(servers))
            for name in order:
                proc, port = servers[name]
                before = cpu_times()
                record = run_generator(proc, port, token, mode, connections, args)
                record.update(
                    server=name,
                    round=round_no,
                    load_avg=round(os.getloadavg()[0], 2),
                    steal_pct=steal_percent(before, cpu_times()),
                )
                emit(record)
                rounds[name].append(record)
                accepted[name] += int(record.get("accepted") or 0)
        for name, records in rounds.items():
            key, high = ("p99_ms", False) if mode == "open" else ("rate", True)
            results[name].append(_median(records, key, high))
        log(f"{mode} loop, {connections} connection(s): done (load {os.getloadavg()[0]:.2f})")
    return results, accepted


async def issue(database_url: str) -> str:
    from novaberg.store.postgres import create_pool
    from novaberg.store.users import issue_token

    pool = await create_pool(database_url, max_size=1)
    try:
        return (await issue_token(pool, "bench", "bench")).token
    finally:
        await pool.close()


def _queued(redis_url: str) -> int:
    import redis

    from novaberg.pair import Pair
    from novaberg.store import keys

    client = redis.Redis.from_url(redis_url)
    return int(client.llen(keys.prompt_queue(Pair("bench", "nova"))))


VALKEY_STALL_MS = 2
"""Valkey's own latency monitor records every event (command, AOF write/fsync, fork, …)
that took at least this long; the report names them, so a tail can be traced to it."""


def _watch_valkey(redis_url: str) -> None:
    import redis

    redis.Redis.from_url(redis_url).config_set("latency-monitor-threshold", VALKEY_STALL_MS)


def _valkey_stalls(redis_url: str) -> list[dict[str, Any]] | None:
    """Valkey's latency events of the run (event, number seen as latest, max ms); None if
    they could not be read."""
    import redis

    try:
        rows = redis.Redis.from_url(redis_url).execute_command("LATENCY", "LATEST")
    except redis.RedisError as exc:
        log(f"could not read Valkey's latency monitor: {exc}")
        return None
    return [
        {"event": str(row[0], "utf-8") if isinstance(row[0], bytes) else str(row[0]),
         "latest_ms": int(row[2]), "max_ms": int(row[3])}
        for row in rows
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs per server and level")
    parser.add_argument("--rate", type=float, default=GOAL_RATE, help="open-loop msg/s")
    parser.add_argument("--seconds", type=float, default=3.0, help="open-loop duration")
    parser.add_argument("--open", default="8,32,128", help="open-loop connection counts")
    parser.add_argument("--closed", default="1,16,64", help="closed-loop connection counts")
    parser.add_argument("--requests", type=int, default=3000, help="per closed-loop run")
    parser.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=["open", "closed"], help=argparse.SUPPRESS)
    parser.add_argument("--connections", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        generate(args)
        return
    args.open = [int(c) for c in args.open.split(",") if c]
    args.closed = [int(c) for c in args.closed.split(",") if c]

    sys.path.insert(0, str(SRC))
    from novaberg.config import load_settings
    from novaberg.runtime.services import EmbeddedServices

    home = Path(tempfile.mkdtemp(prefix="novaberg-bench-intake-"))
    services = EmbeddedServices(load_settings(home=home, llm="scripted", pixie=False))
    endpoints = services.start()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        token = asyncio.run(issue(endpoints.database_url))
        bare = start_server(BARE_SERVER)
        procs.append(bare[0])
        real = start_server(REAL_SERVER, str(home), endpoints.redis_url, endpoints.database_url)
        procs.append(real[0])
        _watch_valkey(endpoints.redis_url)
        before = cpu_times()
        results, accepted = measure({"bare": bare, "intake": real}, token, args)
        steal = steal_percent(before, cpu_times())
        stalls = _valkey_stalls(endpoints.redis_url)
        queued = _queued(endpoints.redis_url)
    finally:
        for proc in procs:
            stop_server(proc)
        services.stop()
        shutil.rmtree(home, ignore_errors=True)
    report(results, queued, accepted["intake"], steal, stalls)


def _fmt(value: float | None, width: int, digits: int = 2) -> str:
    return f"{'FAILED' if value is None else f'{value:.{digits}f}':>{width}}"


def report(
    results: dict[str, list[dict[str, Any]]],
    queued: int,
    accepted: int,
    steal: float | None,
    stalls: list[dict[str, Any]] | None,
) -> None:
    bare = {(r["mode"], r["connections"]): r for r in results["bare"]}
    opens = [r for r in results["intake"] if r["mode"] == "open"]
    closed_rates = {
        name: [r["rate"] for r in rs if r["mode"] == "closed"] for name, rs in results.items()
    }
    best = {
        name: (None if not rates or None in rates else max(rates))
        for name, rates in closed_rates.items()
    }
    ratio = round(best["intake"] / best["bare"], 3) if best["intake"] and best["bare"] else None
    worst_p99 = (
        None
        if not opens or any(r["p99_ms"] is None for r in opens)
        else max(r["p99_ms"] for r in opens)
    )
    reached = bool(opens) and all(
        r["rate"] is not None and r["rate"] >= r["target_rate"] * RATE_TOLERANCE for r in opens
    )
    summary = {
        "summary": "intake",
        "cpus": os.cpu_count(),
        "load_avg_1m_at_end": round(os.getloadavg()[0], 2),
        "cpu_steal_pct": steal,
        "valkey_stalls": stalls,
        "open_loop_rate": opens[0]["target_rate"] if opens else None,
        "open_loop_worst_p99_ms": worst_p99,
        "open_loop_reached_rate": reached,
        "best_closed_rate": best["intake"],
        "best_bare_closed_rate": best["bare"],
        "ratio_to_bare": ratio,
        "accepted_202": accepted,
        "queued_messages": queued,
        "goal_p99_at_rate": worst_p99 is not None and worst_p99 <= GOAL_P99_MS and reached,
        "goal_ratio": ratio is not None and ratio >= GOAL_RATIO,
    }
    emit(summary)
    print()
    print(
        f"{'load':<20}{'intake msg/s':>13}{'p50 ms':>8}{'p99 ms':>8}{'cpu us':>8}"
        f"{'bare msg/s':>12}{'p50 ms':>8}{'p99 ms':>8}{'cpu us':>8}"
    )
    for r in results["intake"]:
        b = bare[(r["mode"], r["connections"])]
        label = (
            f"open {r['target_rate']:.0f}/s, {r['connections']} conn"
            if r["mode"] == "open"
            else f"closed, {r['connections']} conn"
        )
        print(
            f"{label:<20}{_fmt(r['rate'], 13, 0)}{_fmt(r['p50_ms'], 8)}{_fmt(r['p99_ms'], 8)}"
            f"{_fmt(r['server_cpu_us_per_req'], 8, 0)}{_fmt(b['rate'], 12, 0)}"
            f"{_fmt(b['p50_ms'], 8)}{_fmt(b['p99_ms'], 8)}{_fmt(b['server_cpu_us_per_req'], 8, 0)}"
        )
        for rec, name in ((r, "intake"), (b, "bare")):
            if rec.get("failed"):
                print(f"  {name} FAILED: {rec['failed']}")
    print("(open loop: latency from the due time; cpu us = server CPU per request)")
    for r in opens:
        b = bare[("open", r["connections"])]
        print(
            f"open, {r['connections']} conn, from the actual send: intake p50 "
            f"{_fmt(r['p50_from_send_ms'], 0)} / p99 {_fmt(r['p99_from_send_ms'], 0)} ms, bare "
            f"p50 {_fmt(b['p50_from_send_ms'], 0)} / p99 {_fmt(b['p99_from_send_ms'], 0)} ms; "
            f"generator CPU {_fmt(r.get('client_cpu_us_per_req'), 0, 0)} us/req"
        )
    print()
    print(
        f"open loop at {summary['open_loop_rate']} msg/s: worst p99 over "
        f"{[r['connections'] for r in opens]} connections {_fmt(worst_p99, 0)} ms, rate "
        f"{'reached' if reached else 'NOT reached'} (goal ≤ {GOAL_P99_MS:.0f} ms at the rate: "
        f"{'met' if summary['goal_p99_at_rate'] else 'NOT met'})"
    )
    print(
        f"best closed-loop throughput: intake {_fmt(best['intake'], 0, 0)} msg/s, bare "
        f"{_fmt(best['bare'], 0, 0)} msg/s -> ratio {_fmt(ratio, 0, 3)} (goal ≥ {GOAL_RATIO}: "
        f"{'met' if summary['goal_ratio'] else 'NOT met'})"
    )
    print(
        f"intake 202 answers {accepted}, utterances in the queue {queued}: "
        f"{'none lost' if accepted == queued else 'MISMATCH'}"
    )
    print(
        f"machine: {os.cpu_count()} cores, 1-min load average at the end "
        f"{os.getloadavg()[0]:.2f} (generator, servers and Valkey share these cores); "
        f"CPU steal during the run {_fmt(steal, 0, 1)} % (the hypervisor running other "
        f"machines on these cores; figures measured meanwhile are slower by it)"
    )
    if stalls is None:
        print("Valkey stalls: NOT read (see the log above)")
    else:
        named = ", ".join(f"{s['event']} up to {s['max_ms']} ms" for s in stalls) or "none"
        print(f"Valkey's own stalls of ≥ {VALKEY_STALL_MS} ms during the run: {named}")


if __name__ == "__main__":
    main()
