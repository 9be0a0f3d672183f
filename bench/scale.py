"""Scale bench: do Redis commands and worker CPU per turn stay flat as workers and active
pairs grow, and what does an idle installation send?

The bench owns an embedded Valkey and PostgreSQL in a fresh home (bench/_cluster.py) and
starts `novaberg worker` processes (and, for the idle figure, `novaberg api`) on them with
the scripted model at zero latency.

- **Active pairs.** Other people's conversations in the middle of a slow turn: a pair
  whose turn marker is held (as a running turn holds it) with an utterance waiting behind
  it, in the set of active pairs. Every worker's consumers meet such a pair on every poll
  and find nothing to start, exactly as they meet a pair whose model takes minutes; no
  turn of theirs ends during the measurement (lightweight: no process holds them).
- **Per configuration** (workers W, active pairs P): first a window with only the active
  pairs (what polling and housekeeping cost per second), then U users' utterances queued
  at once (each its own block) and drained at zero model latency. Redis commands are
  counted per command name from `INFO commandstats` deltas, the bench's own commands left
  out (bench/_commandstats.py); worker CPU from /proc. Per turn: all commands, split into
  polling (at most as many idle windows' worth as the counts per command name allow) and
  the turn's own work (the rest, at least).
- **Idle installation**: one `novaberg api` and one `novaberg worker`, no pair active,
  commands per second over a window, by command name.

Configurations: 1, 2, 4 workers at 10 active pairs; 1 worker at 100 and 1 000. The last
line reads `scale: R1 Redis commands per turn at 1 worker, R4 at 4 workers, RP at 1000
active pairs; idle I commands/s`. Goal (issue 37): R4 and RP within 10 % of R1; I at most
one command per second per worker beyond its heartbeat.

    .venv/bin/python bench/scale.py [--quick] [--users N] [--turns T] [--keep]

`--quick` measures fewer turns and shorter windows (≈ 2 minutes instead of ≈ 4).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _cluster import Cluster, Proc, tree_cpu_seconds
from _commandstats import delta, snapshot, split_polling
from _machine import cpu_times, steal_percent
from chaos import issue_tokens, rules
from novaberg.events.queues import pair_member
from novaberg.pair import Pair
from novaberg.store import keys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

READY_PAIRS: str | None = keys.ready_pairs() if hasattr(keys, "ready_pairs") else None
"""The list workers wait on, where they do (None: polling workers, the code before)."""

HOLD_MARKER = "scale-hold"
"""The turn marker of an active pair: no worker owns it, none frees it during the run."""


@dataclass(frozen=True)
class Config:
    workers: int
    pairs: int


CONFIGS = (Config(1, 10), Config(2, 10), Config(4, 10), Config(1, 100), Config(1, 1000))


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def hold_active_pairs(client: Any, count: int) -> None:
    """`count` pairs in the middle of a turn: marker held, an utterance waiting behind it."""
    pipe = client.pipeline(transaction=False)
    for n in range(count):
        pair = Pair(f"aktiv{n:04d}", "nova")
        pipe.set(keys.turn_marker(pair), HOLD_MARKER, ex=3600)
        entry = {
            "nachrichten_id": f"aktiv-{n}",
            "prompt": "Erzähl mir was.",
            "empfangen_am": time.time(),
            "client_id": None,
        }
        pipe.rpush(keys.prompt_queue(pair), json.dumps(entry))
        pipe.sadd(keys.active_pairs(), pair_member(pair))
    pipe.execute()


def queue_turns(client: Any, users: list[str], turns: int, tag: str) -> None:
    """Every user's `turns` utterances at once, 31 s apart in `empfangen_am` (each its
    own block), stored as the intake stores them: queue, active set and (where workers
    wait on it) the ready list."""
    base = time.time() - 3600
    pipe = client.pipeline(transaction=False)
    for user in users:
        pair = Pair(user, "nova")
        for n in range(turns):
            entry = {
                "nachrichten_id": f"scale-{tag}-{user}-{n}",
                "prompt": f"Wie war dein Tag, Runde {n}?",
                "empfangen_am": base + 31 * n,
                "client_id": None,
            }
            pipe.rpush(keys.prompt_queue(pair), json.dumps(entry))
        pipe.sadd(keys.active_pairs(), pair_member(pair))
        if READY_PAIRS is not None:
            pipe.rpush(READY_PAIRS, pair_member(pair))
    pipe.execute()


def workers_cpu(workers: list[Proc]) -> float:
    return sum(tree_cpu_seconds(p.pid) or 0.0 for p in workers)


def window(client: Any, seconds: float, procs: list[Proc]) -> tuple[Counter[str], float, float]:
    """(commands by name, elapsed seconds, worker CPU seconds) over a quiet window."""
    cpu, before, began = workers_cpu(procs), snapshot(client), time.monotonic()
    time.sleep(seconds)
    spent = delta(before, snapshot(client))
    return spent, time.monotonic() - began, workers_cpu(procs) - cpu


def measure(
    cluster: Cluster, config: Config, users: list[str], turns: int, idle_seconds: float
) -> dict[str, Any]:
    client = cluster.redis()
    client.flushall()
    hold_active_pairs(client, config.pairs)
    procs = [cluster.start_worker() for _ in range(config.workers)]
    try:
        cluster.wait_registered(procs)
        time.sleep(2.0)  # past their first sweep (every active pair once) and heartbeat
        idle, idle_elapsed, idle_cpu = window(client, idle_seconds, procs)
        total = len(users) * turns
        cpu, before, began = workers_cpu(procs), snapshot(client), time.monotonic()
        queue_turns(client, users, turns, f"{config.workers}-{config.pairs}")
        done = 0
        while time.monotonic() < began + 300:
            done = sum(1 for _ in client.scan_iter(match="turn_ausgang:*", count=1000))
            if done >= total:
                break
            time.sleep(0.1)
        elapsed = time.monotonic() - began
        spent = delta(before, snapshot(client))
        worker_cpu = workers_cpu(procs) - cpu
        failed = sum(
            1
            for user in users
            for m in client.zrange(keys.delivery_log(user), 0, -1)
            if '"typ":"turn_gescheitert"' in m
        )
        spent["rpush"] -= len(users) * (turns + (READY_PAIRS is not None))  # the bench's own
        spent["sadd"] -= len(users)
        spent = +spent
    finally:
        client.close()
        cluster.stop_processes()
    polling, own = split_polling(spent, idle)
    per_turn = max(done, 1)
    return {
        "workers": config.workers,
        "active_pairs": config.pairs,
        "turns": done,
        "failed": failed,
        "complete": done >= total,
        "seconds": round(elapsed, 1),
        "redis_commands_per_turn": round(sum(spent.values()) / per_turn, 1),
        "polling_per_turn": round(polling / per_turn, 1),
        "own_work_per_turn": round(own / per_turn, 1),
        "worker_cpu_ms_per_turn": round(1000 * worker_cpu / per_turn, 1),
        "idle_commands_per_s": round(sum(idle.values()) / idle_elapsed, 1),
        "idle_worker_cpu_pct": round(100 * idle_cpu / idle_elapsed, 1),
        "by_command": dict(spent.most_common()),
        "idle_by_command_per_s": {
            name: round(count / idle_elapsed, 1) for name, count in idle.most_common(6)
        },
    }


def measure_idle(cluster: Cluster, seconds: float) -> dict[str, Any]:
    """An idle installation: one API, one worker, nothing active."""
    client = cluster.redis()
    client.flushall()
    try:
        cluster.start_api()
        procs = [cluster.start_worker()]
        cluster.wait_registered(procs)
        time.sleep(2.0)
        spent, elapsed, _cpu = window(client, seconds, procs)
    finally:
        client.close()
        cluster.stop_processes()
    return {
        "seconds": round(elapsed, 1),
        "commands_per_s": round(sum(spent.values()) / elapsed, 1),
        "by_command_per_s": {name: round(c / elapsed, 2) for name, c in spent.most_common()},
    }


def report(rows: list[dict[str, Any]], idle: dict[str, Any]) -> None:
    print("Redis commands and worker CPU per turn at zero model latency:")
    print(
        f"  {'workers':>7} {'active':>6} {'turns':>5} {'failed':>6} {'cmds/turn':>9} "
        f"{'polling':>8} {'own':>6} {'CPU ms/turn':>11} {'idle cmds/s':>11} {'idle CPU %':>10}"
    )
    for row in rows:
        turns = row["turns"] if row["complete"] else f"{row['turns']}!"
        print(
            f"  {row['workers']:>7} {row['active_pairs']:>6} {turns:>5} {row['failed']:>6} "
            f"{row['redis_commands_per_turn']:>9} {row['polling_per_turn']:>8} "
            f"{row['own_work_per_turn']:>6} {row['worker_cpu_ms_per_turn']:>11} "
            f"{row['idle_commands_per_s']:>11} {row['idle_worker_cpu_pct']:>10}"
        )
    print("  (idle: a window with the same workers and active pairs and nothing to start, per")
    print("   second. polling: at most that many such windows' worth of polling and housekeeping")
    print("   as the turn phase's counts per command name allow; own: the rest, at least.)")
    parts = ", ".join(f"{n} {v}" for n, v in idle["by_command_per_s"].items())
    print(f"idle installation (1 api + 1 worker): {idle['commands_per_s']} commands/s ({parts})")


def figure(rows: list[dict[str, Any]], workers: int, pairs: int) -> str:
    row = next((r for r in rows if r["workers"] == workers and r["active_pairs"] == pairs), None)
    if row is None or not row["complete"]:
        return "null"
    return f"{row['redis_commands_per_turn']:.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer turns, shorter windows")
    parser.add_argument("--users", type=int, default=None, help="users with turns to drain")
    parser.add_argument("--turns", type=int, default=None, help="turns per user")
    parser.add_argument("--keep", action="store_true", help="keep the home (logs) afterwards")
    args = parser.parse_args()
    users_count = args.users or (10 if args.quick else 20)
    turns = args.turns or 3
    idle_seconds = 3.0 if args.quick else 6.0

    home = Path(tempfile.mkdtemp(prefix="novaberg-scale-", dir="/tmp"))
    home.chmod(0o755)  # the embedded PostgreSQL runs as its own user when started by root
    (home / "rules.json").write_text(json.dumps(rules(latency=False)), encoding="utf-8")
    cluster = Cluster(home, home / "rules.json", {"NOVABERG_MODEL_SLOTS": "64"})
    before = cpu_times()
    log(f"home {home}")
    rows: list[dict[str, Any]] = []
    idle: dict[str, Any] = {}
    try:
        cluster.start_servers()
        all_users = [[f"skala{i}x{u:02d}" for u in range(users_count)] for i in range(len(CONFIGS))]
        asyncio.run(issue_tokens(cluster.database_url, [u for us in all_users for u in us]))
        idle = measure_idle(cluster, idle_seconds)
        log(f"idle: {json.dumps(idle)}")
        for config, users in zip(CONFIGS, all_users, strict=True):
            rows.append(measure(cluster, config, users, turns, idle_seconds))
            log(f"scale: {json.dumps(rows[-1])}")
    finally:
        cluster.stop_processes()
        cluster.stop_servers()
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)
    report(rows, idle)
    steal = steal_percent(before, cpu_times())
    print(
        f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; CPU steal "
        f"{'unknown' if steal is None else f'{steal:.1f} %'})"
    )
    r1, r4, rp = figure(rows, 1, 10), figure(rows, 4, 10), figure(rows, 1, 1000)
    rate = idle.get("commands_per_s")
    print(
        f"scale: {r1} Redis commands per turn at 1 worker, {r4} at 4 workers, {rp} at 1000 "
        f"active pairs; idle {'null' if rate is None else f'{rate:.1f}'} commands/s"
    )
    return 0 if rows and all(r["complete"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
