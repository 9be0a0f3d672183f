"""Chaos bench: does every accepted message end in exactly one outcome while things break?

One `novaberg api` and three `novaberg worker` processes run on one Redis (the embedded
Valkey, AOF on) and one PostgreSQL, started through the project's runtime in a fresh
home. Users (default 50) each write 20 messages — some in bursts of quick messages — to
the scripted model, whose latencies (1.2 s per answer, a few hundred ms per analysis)
make every kill land in running turns; a few messages ask for a model timeout
(`ZEITLIMIT`) or an unreadable model answer (`KAPUTT`) through `NOVABERG_SCRIPT` rules.
Meanwhile the bench
- SIGKILLs a worker every ~20 s and starts a replacement,
- SIGKILLs the API once and starts a new one (clients reconnect with `since`),
- stops Redis for a few seconds (SIGTERM: its AOF is written) and starts it again,
- restarts PostgreSQL once.
Clients retry a message the server did not accept (503 during the Redis outage, refused
while the API is down) and count an id as accepted only with its 202.

Report: accepted; outcomes per id (exactly one / lost / duplicated); `turn_gescheitert`
by reason; p50/p99/max time from 202 to outcome; recovery after each fault (when the ids
that were in flight at it had their outcomes, when the intake answered again, when every
socket was back); the session history of each pair (no duplicated turn, no missing turn
for an answered message); then turns/s with 1, 2 and 4 workers at zero model latency and
where that limit lies. The last line reads `chaos: N accepted, E exactly once, L lost,
D duplicated`; the exit status is 1 unless L and D are 0.

    .venv/bin/python bench/chaos.py [--quick] [--cluster] [--users N] [--messages M] [--no-scale]

`--quick` runs a smaller storm (≈ 2 minutes) with the same kinds of faults. `--cluster`
runs on a 3+3 Valkey cluster (runtime/embedded_cluster.py) with `NOVABERG_REDIS_CLUSTER`;
its Redis fault SIGKILLs a master mid-load instead of stopping the one server (the replica
takes over; the dead node restarts and rejoins as a replica), and the turns/s runs are
skipped (they count one server's commands).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect

from _cluster import Cluster, Proc, in_flight, tree_cpu_seconds
from _machine import cpu_times, steal_percent
from novaberg.pair import Pair
from novaberg.store import keys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

RESPONDER = "Antworte kurz und natürlich"
"""Matches only the responder's prompt."""

ROUTER = {
    "needs_memory": False,
    "needs_web": False,
    "needs_timeline": False,
    "timeline_query": None,
    "momentum": "mid",
    "management_action": "",
    "management_target": "",
    "management_target_typ": "titel",
}
"""Plain conversation, no task agent (whose actions would make a run unsupersedable)."""

APPROVE = {"score": 0.05, "direktiven_score": 0.05, "begruendung": ""}
THINKER_OK = {"ergebnis": "OK", "probleme": "", "korrigierte_antwort": ""}

TIMEOUT_WORD = "ZEITLIMIT"
MALFORMED_WORD = "KAPUTT"


def rules(latency: bool) -> list[dict[str, Any]]:
    """The scripted model: fixed decisions; with `latency`, the delays that make faults
    land mid-turn, and the two fault words. Fault rules look at the current stimulus only
    (the part of the prompt after its header), not at earlier turns in the history."""

    def ms(value: int) -> dict[str, int]:
        return {"latency_ms": value} if latency else {}

    faults: list[dict[str, Any]] = [
        {
            "match": rf"\[AKTUELLER PROMPT\].*{TIMEOUT_WORD}",
            "output": "",
            "fault": "timeout",
            **ms(800),
        },
        {  # the answer itself unreadable: the turn fails (analyses fall back instead)
            "match": rf"\[AKTUELLER PROMPT\].*{MALFORMED_WORD}",
            "fault": "malformed",
            **ms(100),
        },
    ]
    return [
        *(faults if latency else []),
        {"match": ".*", "schema": "RouterDecision", "output": ROUTER, **ms(150)},
        {"match": ".*", "schema": "PerceptionResult", "output": {}, **ms(200)},
        *[
            {"match": ".*", "schema": name, "output": APPROVE, **ms(250)}
            for name in ("JuristVerdict", "PsychologistVerdict", "EthicistVerdict")
        ],
        {"match": ".*", "schema": "ThinkerCheck", "output": THINKER_OK, **ms(150)},
        {"match": RESPONDER, "output": "Ich bin da und höre zu.", **ms(1200)},
    ]


@dataclass(frozen=True)
class Plan:
    """What a run does, in seconds from the first message. Worker kills keep ≥ 10 s from
    the other faults: a replacement still booting while PostgreSQL restarts could not run
    its migrations, and one booting while Redis is down would only wait."""

    users: int
    messages: int
    send_seconds: float
    worker_kills: tuple[float, ...]
    api_kill_at: float
    redis_stop_at: float
    redis_down: float
    postgres_restart_at: float
    drain_seconds: float = 240.0

    @classmethod
    def full(cls, users: int, messages: int) -> Plan:
        kills = (15.0, 35.0, 52.0, 78.0, 95.0, 128.0, 145.0, 180.0, 200.0, 220.0)
        return cls(users, messages, 200.0, kills, 65.0, 112.0, 4.0, 162.0)

    @classmethod
    def quick(cls, users: int, messages: int) -> Plan:
        kills = (12.0, 35.0, 55.0, 75.0)
        return cls(users, messages, 65.0, kills, 24.0, 45.0, 3.0, 65.0, drain_seconds=90.0)


# -- clients ---------------------------------------------------------------------------------


@dataclass
class Outcome:
    seq: int
    typ: str
    reason: str | None
    at: float


@dataclass
class Client:
    """One user: a WebSocket that reconnects with `since`, and the messages it sent."""

    user: str
    token: str
    ws_url: str
    accepted: dict[str, float] = field(default_factory=dict)
    outcomes: dict[str, list[Outcome]] = field(default_factory=lambda: defaultdict(list))
    seen: set[int] = field(default_factory=set)
    last_seq: int | None = None
    connected: bool = False
    reconnected_at: list[float] = field(default_factory=list)
    retries: Counter[str] = field(default_factory=Counter)
    rejected: list[str] = field(default_factory=list)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)

    async def listen(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            query = f"token={self.token}" + (
                f"&since={self.last_seq}" if self.last_seq is not None else ""
            )
            try:
                async with connect(f"{self.ws_url}?{query}", max_size=None) as ws:
                    async for raw in ws:
                        self._take(json.loads(raw))
            except Exception:
                pass
            if self.connected:
                self.connected = False
            await asyncio.sleep(0.2)

    def _take(self, message: dict[str, Any]) -> None:
        now = time.time()
        if message.get("typ") == "verbindung":
            if self.last_seq is None:
                self.last_seq = int(message.get("seq_aktuell", 0))
            self.connected = True
            self.reconnected_at.append(now)
            return
        seq = message.get("seq")
        if not isinstance(seq, int) or seq in self.seen:
            return
        self.seen.add(seq)
        self.last_seq = max(self.last_seq or 0, seq)
        typ = message.get("typ")
        if typ in ("character_response", "turn_gescheitert"):
            sent = float(message.get("gesendet_am") or now)  # the server's clock: not when
            for mid in message.get("nachrichten_ids") or []:  # a reconnect caught up
                self.outcomes[str(mid)].append(Outcome(seq, typ, message.get("grund"), sent))
            if typ == "character_response":
                self.answers[str(message.get("turn_id"))] = message

    async def send(self, http: httpx.AsyncClient, text: str, stop: asyncio.Event) -> None:
        """POST until the server accepts (202) or refuses for good (another 4xx)."""
        while not stop.is_set():
            try:
                response = await http.post(
                    "/chat",
                    json={"character_id": "nova", "text": text},
                    headers={"Authorization": f"Bearer {self.token}"},
                )
            except httpx.HTTPError as exc:
                self.retries[type(exc).__name__] += 1
                await asyncio.sleep(0.3)
                continue
            if response.status_code == 202:
                self.accepted[response.json()["nachrichten_id"]] = time.time()
                return
            if response.status_code >= 500 or response.status_code == 429:
                self.retries[str(response.status_code)] += 1
                await asyncio.sleep(0.3)
                continue
            self.rejected.append(f"{response.status_code} {response.text[:80]}")
            return


def schedule(rng: random.Random, plan: Plan, user: int) -> list[tuple[float, str]]:
    """(offset, text) of one user's messages: gaps of a few seconds, and bursts of 2-4
    messages within a second or two; ~4 % ask for a timeout, ~4 % for a bad answer."""
    out: list[tuple[float, str]] = []
    mean_gap = plan.send_seconds / max(plan.messages, 1)
    at = rng.uniform(0, mean_gap)
    index = 0
    while index < plan.messages:
        burst = rng.choice([1, 1, 1, 2, 3, 4])
        for _ in range(min(burst, plan.messages - index)):
            word = rng.choices(["", TIMEOUT_WORD, MALFORMED_WORD], [92, 4, 4])[0]
            out.append((at, f"Nachricht {index + 1} von Person {user}. {word}".strip()))
            index += 1
            at += rng.uniform(0.1, 0.6)
        at += rng.uniform(0.3, 1.7) * mean_gap * burst
    scale = plan.send_seconds / max(at, 1e-9) if at > plan.send_seconds else 1.0
    return [(offset * scale, text) for offset, text in out]


# -- faults ----------------------------------------------------------------------------------


@dataclass
class Fault:
    kind: str
    at: float
    """Seconds from the start of the run."""
    in_flight: list[str]
    back_at: float | None = None
    """When the server came back (Redis, PostgreSQL, API), seconds from the start."""
    detail: str = ""
    sockets_back: float | None = None


class Storm:
    def __init__(self, cluster: Cluster, plan: Plan, clients: list[Client], start: float):
        self.cluster = cluster
        self.plan = plan
        self.clients = clients
        self.start = start
        self.faults: list[Fault] = []
        self.booting: list[asyncio.Task[None]] = []
        self.rng = random.Random(7)

    def now(self) -> float:
        return time.time() - self.start

    async def run(self) -> None:
        planned = [
            (self.plan.api_kill_at, "api"),
            (self.plan.redis_stop_at, "redis"),
            (self.plan.postgres_restart_at, "postgres"),
            *((at, "worker") for at in self.plan.worker_kills),
        ]
        for when, kind in sorted(planned):
            await asyncio.sleep(max(0.0, when - self.now()))
            await getattr(self, f"_{kind}")()

    async def _worker(self) -> None:
        live = [p for p in self.cluster.live_workers() if p.worker_id]
        if not live:
            return
        victim = self.rng.choice(live)
        flying = await asyncio.to_thread(self._in_flight, [victim.worker_id or ""])
        self.cluster.kill(victim)
        fault = Fault("worker kill", self.now(), flying, detail=victim.name)
        self.faults.append(fault)
        log(f"{fault.at:6.1f}s SIGKILL {victim.name} ({len(flying)} id(s) in flight)")
        replacement = self.cluster.start_worker()
        self.booting.append(asyncio.create_task(self._registered(replacement)))

    async def _registered(self, proc: Proc) -> None:
        try:
            await asyncio.to_thread(self.cluster.wait_registered, [proc])
        except RuntimeError as exc:
            log(f"{self.now():6.1f}s {proc.name} did not come up: {exc}")
        else:
            log(f"{self.now():6.1f}s {proc.name} registered")

    async def _api(self) -> None:
        assert self.cluster.api is not None
        flying = await asyncio.to_thread(self._in_flight, None)
        self.cluster.kill(self.cluster.api)
        fault = Fault("api kill", self.now(), flying)
        self.faults.append(fault)
        log(f"{fault.at:6.1f}s SIGKILL the API")
        await asyncio.to_thread(self.cluster.start_api)
        fault.back_at = self.now()
        log(f"{fault.back_at:6.1f}s API answers again")
        fault.sockets_back = await self._sockets_back(fault.at)

    async def _redis(self) -> None:
        if self.cluster.redis_cluster:
            await self._master()
            return
        flying = await asyncio.to_thread(self._in_flight, None)
        await asyncio.to_thread(self.cluster.redis_server.stop)
        fault = Fault("redis stop", self.now(), flying)
        self.faults.append(fault)
        log(f"{fault.at:6.1f}s Redis stopped ({len(flying)} id(s) in flight)")
        await asyncio.sleep(self.plan.redis_down)
        await asyncio.to_thread(self.cluster.redis_server.start)
        fault.back_at = self.now()
        fault.detail = f"down {fault.back_at - fault.at:.1f} s"
        log(f"{fault.back_at:6.1f}s Redis started again (AOF loaded)")

    async def _master(self) -> None:
        """Cluster mode's Redis fault: SIGKILL a master mid-load (no AOF flush, no goodbye);
        its replica takes over after the node timeout. The dead node is started again after
        `redis_down` seconds and rejoins as the new master's replica."""
        nodes = self.cluster.valkey_cluster
        flying = await asyncio.to_thread(self._in_flight, None)
        victim = self.rng.choice(await asyncio.to_thread(nodes.masters))
        await asyncio.to_thread(nodes.kill, victim)
        fault = Fault("master kill", self.now(), flying, detail=victim.address)
        self.faults.append(fault)
        log(f"{fault.at:6.1f}s SIGKILL Valkey master {victim.address} ({len(flying)} in flight)")
        await asyncio.to_thread(nodes.wait_ok)  # the live nodes: 3 masters again
        fault.back_at = self.now()
        log(f"{fault.back_at:6.1f}s its replica took over ({fault.back_at - fault.at:.1f} s)")
        await asyncio.sleep(self.plan.redis_down)
        await asyncio.to_thread(nodes.restart, victim)
        await asyncio.to_thread(nodes.wait_ok)
        log(f"{self.now():6.1f}s {victim.address} back as a replica")

    async def _postgres(self) -> None:
        flying = await asyncio.to_thread(self._in_flight, None)
        at = self.now()
        await asyncio.to_thread(self.cluster.postgres.stop)
        await asyncio.to_thread(self.cluster.postgres.start)
        fault = Fault("postgres restart", at, flying, back_at=self.now())
        fault.detail = f"down {fault.back_at - at:.1f} s" if fault.back_at else ""
        self.faults.append(fault)
        log(f"{at:6.1f}s PostgreSQL restarted ({len(flying)} id(s) in flight)")

    def _in_flight(self, worker_ids: list[str] | None) -> list[str]:
        client = self.cluster.redis()
        try:
            return in_flight(client, worker_ids)
        finally:
            client.close()

    async def _sockets_back(self, since: float, timeout: float = 60.0) -> float | None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            stamps = [
                next((t - self.start for t in c.reconnected_at if t - self.start > since), None)
                for c in self.clients
            ]
            if all(s is not None for s in stamps):
                return max(s for s in stamps if s is not None)
            await asyncio.sleep(0.1)
        return None


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- the run ---------------------------------------------------------------------------------


async def issue_tokens(database_url: str, users: list[str]) -> dict[str, str]:
    from novaberg.store.postgres import create_pool
    from novaberg.store.users import issue_token

    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        return {u: (await issue_token(pool, u, "chaos")).token for u in users}
    finally:
        await pool.close()


async def storm(cluster: Cluster, plan: Plan) -> dict[str, Any]:
    users = [f"chaos{i:02d}" for i in range(plan.users)]
    tokens = await issue_tokens(cluster.database_url, users)
    cluster.start_api()
    procs = [cluster.start_worker() for _ in range(3)]
    await asyncio.to_thread(cluster.wait_registered, procs)
    ws_url = cluster.url.replace("http://", "ws://") + "/ws"
    clients = [Client(u, tokens[u], ws_url) for u in users]
    stop = asyncio.Event()
    listeners = [asyncio.create_task(c.listen(stop)) for c in clients]
    while not all(c.connected for c in clients):
        await asyncio.sleep(0.05)
    rng = random.Random(42)
    plans = {c.user: schedule(rng, plan, i) for i, c in enumerate(clients)}
    start = time.time()
    chaos = Storm(cluster, plan, clients, start)

    async with httpx.AsyncClient(
        base_url=cluster.url, timeout=15, limits=httpx.Limits(max_connections=200)
    ) as http:

        async def user_loop(client: Client) -> None:
            for offset, text in plans[client.user]:
                await asyncio.sleep(max(0.0, offset - (time.time() - start)))
                await client.send(http, text, stop)

        faults = asyncio.create_task(chaos.run())
        await asyncio.gather(*(user_loop(c) for c in clients))
        log(f"{time.time() - start:6.1f}s all messages sent")
        await faults
    deadline = time.monotonic() + plan.drain_seconds
    while time.monotonic() < deadline:
        if all(all(c.outcomes.get(i) for i in c.accepted) for c in clients):
            break
        await asyncio.sleep(0.5)
    await asyncio.sleep(3.0)  # a late duplicate would show up now
    ended = time.time() - start
    log(f"{ended:6.1f}s drained")
    stop.set()
    for task in listeners:
        task.cancel()
    await asyncio.gather(*listeners, return_exceptions=True)
    sessions = await asyncio.to_thread(read_sessions, cluster, users)
    crashed = [p.name for p in cluster.procs if not p.alive() and p.pid not in cluster.killed]
    return {
        "crashed": crashed,
        "clients": clients,
        "faults": chaos.faults,
        "start": start,
        "seconds": ended,
        "sessions": sessions,
    }


def read_sessions(cluster: Cluster, users: list[str]) -> dict[str, list[dict[str, Any]]]:
    client = cluster.redis()
    try:
        return {
            u: [json.loads(t) for t in client.lrange(keys.session_turns(Pair(u, "nova")), 0, -1)]
            for u in users
        }
    finally:
        client.close()


# -- the report ------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f} s"


def report(result: dict[str, Any], plan: Plan, mode: str) -> tuple[int, int, int, int, bool]:
    clients: list[Client] = result["clients"]
    start: float = result["start"]
    accepted = {i: (c, t) for c in clients for i, t in c.accepted.items()}
    counts = {i: len(c.outcomes.get(i, [])) for i, (c, _t) in accepted.items()}
    once = sum(1 for n in counts.values() if n == 1)
    lost = [i for i, n in counts.items() if n == 0]
    duplicated = [i for i, n in counts.items() if n > 1]
    unknown = sum(1 for c in clients for i in c.outcomes if i not in c.accepted)
    first = {i: c.outcomes[i][0] for i, (c, _t) in accepted.items() if c.outcomes.get(i)}
    latency = [first[i].at - t for i, (_c, t) in accepted.items() if i in first]
    answers = sum(1 for o in first.values() if o.typ == "character_response")
    reasons = Counter(
        (o.reason or "?").split(" (")[0] for o in first.values() if o.typ == "turn_gescheitert"
    )
    retries: Counter[str] = Counter()
    for c in clients:
        retries.update(c.retries)
    rejected = [r for c in clients for r in c.rejected]

    print(
        f"chaos run ({mode}): {plan.users} users × {plan.messages} messages over "
        f"{plan.send_seconds:.0f} s, 1 api + 3 workers, {result['seconds']:.0f} s in all"
    )
    print(
        f"  accepted            {len(accepted)} (posts retried: "
        f"{', '.join(f'{k} ×{v}' for k, v in sorted(retries.items())) or 'none'}"
        f"{'; refused: ' + str(len(rejected)) if rejected else ''})"
    )
    print(
        f"  outcomes per id     exactly one {once} | lost {len(lost)} | duplicated "
        f"{len(duplicated)} | outcomes for ids never acknowledged {unknown}"
    )
    print(f"  answered / failed   {answers} character_response, {len(first) - answers} failed")
    for reason, n in reasons.most_common():
        print(f"    turn_gescheitert  {n:4d}  {reason}")
    print(
        f"  time to outcome     p50 {seconds(percentile(latency, 0.5))}  p99 "
        f"{seconds(percentile(latency, 0.99))}  max {seconds(max(latency, default=None))}"
    )
    print("  recovery (ids in flight at the fault → all of them had their outcome):")
    for fault in result["faults"]:
        ends = [first[i].at - start for i in fault.in_flight if i in first]
        restarted = fault.kind in ("redis stop", "postgres restart")
        base = (fault.back_at or fault.at) if restarted else fault.at
        done = max(ends) - base if ends and len(ends) == len(fault.in_flight) else None
        since = "after the restart" if restarted else "after it"
        line = (
            f"    {fault.at:6.1f}s {fault.kind:<17} {fault.detail:<11} "
            f"{len(fault.in_flight):3d} in flight → "
            + (f"ended {seconds(done)} {since}" if fault.in_flight else "none in flight")
        )
        intake = [
            t - start for (_c, t) in accepted.values() if t - start > (fault.back_at or fault.at)
        ]
        if fault.kind in ("redis stop", "master kill", "api kill"):
            first_ok = min(intake, default=None)
            line += f"; intake accepting {seconds(first_ok - fault.at if first_ok else None)} after the fault"
        if restarted and fault.back_at is not None:
            after = [
                o.at - start - fault.back_at
                for c in clients
                for outs in c.outcomes.values()
                for o in outs
                if o.at - start > fault.back_at
            ]
            line += f"; first outcome {seconds(min(after, default=None))} after the restart"
        if fault.kind == "api kill":
            back = fault.sockets_back
            line += f"; all sockets back {seconds(back - fault.at if back else None)} after it"
        print(line)
    consistent = session_report(result["sessions"], clients, result["faults"], start)
    crashed = result["crashed"]
    print(f"  processes that exited on their own: {', '.join(crashed) or 'none'}")
    if lost:
        print(f"  lost ids: {lost[:10]}{' …' if len(lost) > 10 else ''}")
    if duplicated:
        print(f"  duplicated ids: {duplicated[:10]}{' …' if len(duplicated) > 10 else ''}")
    return len(accepted), once, len(lost), len(duplicated), consistent


FAULT_REACH = 20.0
"""Seconds after a fault (after its server is back) in which a turn counts as touched by
it: the runs in flight then, and those that started while it lasted."""


def session_report(
    sessions: dict[str, list[dict[str, Any]]],
    clients: list[Client],
    faults: list[Fault],
    start: float,
) -> bool:
    """Per pair: no id in two user turns, no turn answered twice, and for every answer
    sent while the session still holds that stretch, its user and answer turns present.
    A missing turn of a turn that a fault touched is expected — a killed worker's post-run,
    a Path 1 or post-run that failed while Redis or PostgreSQL was gone (its answer kept)
    — and counted apart; one no fault touched is an inconsistency."""
    windows = [
        (start + f.at, start + (f.back_at or f.at) + FAULT_REACH)
        for f in faults
        if f.kind != "api kill"
    ]
    dup_user = dup_answer = 0
    missing: Counter[str] = Counter()
    for client in clients:
        turns = sessions.get(client.user, [])
        user_ids = Counter(
            i for t in turns if t.get("rolle") == "user" for i in t.get("nachrichten_ids") or []
        )
        answered_turns = Counter(
            str(t.get("turn_id")) for t in turns if t.get("rolle") == "assistant"
        )
        dup_user += sum(1 for n in user_ids.values() if n > 1)
        dup_answer += sum(1 for n in answered_turns.values() if n > 1)
        oldest = min((float(t.get("zeit", 0)) for t in turns), default=float("inf"))
        for turn_id, answer in client.answers.items():
            sent = float(answer.get("gesendet_am", 0))
            if sent <= oldest + 1:
                continue  # that stretch was summarised away
            ids = [str(i) for i in answer.get("nachrichten_ids") or []]
            began = min((client.accepted.get(i, sent) for i in ids), default=sent)
            touched = any(began <= end and sent >= at for at, end in windows)
            kind = "touched by a fault" if touched else "untouched"
            if turn_id not in answered_turns:
                missing[f"answer turn, {kind}"] += 1
            missing[f"user turn, {kind}"] += sum(1 for i in ids if i not in user_ids)
    print(
        f"  session history     duplicated user turns {dup_user}, duplicated answer turns "
        f"{dup_answer}; answered but missing: answer turns {missing['answer turn, untouched']} "
        f"(+{missing['answer turn, touched by a fault']} of turns a fault touched), user turns "
        f"{missing['user turn, untouched']} (+{missing['user turn, touched by a fault']})"
    )
    return (
        dup_user
        == dup_answer
        == missing["answer turn, untouched"]
        == 0
        == (missing["user turn, untouched"])
    )


# -- scaling ---------------------------------------------------------------------------------


def _cpu(cluster: Cluster, workers: list[Proc]) -> dict[str, float | None]:
    redis_pid = cluster.redis_server.read_pid()
    pg_pid = cluster.postgres_pid()
    return {
        "workers": sum(tree_cpu_seconds(p.pid) or 0.0 for p in workers),
        "redis": tree_cpu_seconds(redis_pid) if redis_pid else None,
        "postgres": tree_cpu_seconds(pg_pid) if pg_pid else None,
    }


def machine_busy(before: tuple[int, ...] | None, after: tuple[int, ...] | None) -> float | None:
    """Share of all CPUs' time that was busy (anyone's processes) between two snapshots."""
    if before is None or after is None:
        return None
    spent = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(spent)
    idle = spent[3] + spent[4]  # idle, iowait
    return round(100 * (total - idle) / total, 1) if total else None


def scale(cluster: Cluster, users: list[str], turns_per_user: int) -> list[dict[str, Any]]:
    """Turns/s with 1, 2 and 4 workers at zero model latency: the queues are filled at once
    (each utterance a block of its own: 31 s apart), the workers drain them. Alongside:
    CPU per component, how busy the whole machine was (other processes included), and
    Redis commands per turn."""
    rows = []
    total = len(users) * turns_per_user
    for count in (1, 2, 4):
        client = cluster.redis()
        client.flushall()
        procs = [cluster.start_worker() for _ in range(count)]
        cluster.wait_registered(procs)
        time.sleep(1.0)  # past their first polls and heartbeats
        base = time.time() - 3600
        cpu_before, machine = _cpu(cluster, procs), cpu_times()
        commands = int(client.info("stats")["total_commands_processed"])
        began = time.monotonic()
        pipe = client.pipeline(transaction=False)
        for user in users:
            pair = Pair(user, "nova")
            for n in range(turns_per_user):
                entry = {
                    "nachrichten_id": f"scale-{count}-{user}-{n}",
                    "prompt": f"Wie war dein Tag, Runde {n}?",
                    "empfangen_am": base + 31 * n,
                    "client_id": None,
                }
                pipe.rpush(keys.prompt_queue(pair), json.dumps(entry))
            pipe.sadd(keys.active_pairs(), f"{user}:nova")
            pipe.rpush(keys.ready_pairs(), f"{user}:nova")  # as the intake does
        pipe.execute()
        done = 0
        while time.monotonic() < began + 600:
            done = sum(1 for _ in client.scan_iter(match="turn_ausgang:*", count=1000))
            if done >= total:
                break
            time.sleep(0.1)
        elapsed = time.monotonic() - began
        cpu_after, busy = _cpu(cluster, procs), machine_busy(machine, cpu_times())
        commands = int(client.info("stats")["total_commands_processed"]) - commands
        failed = sum(
            1
            for user in users
            for m in client.zrange(keys.delivery_log(user), 0, -1)
            if '"typ":"turn_gescheitert"' in m
        )
        client.close()
        cluster.stop_processes()
        share = {}
        for part, before in cpu_before.items():
            after = cpu_after[part]
            share[part] = (
                None if before is None or after is None else round(100 * (after - before) / elapsed)
            )
        worker_cpu = (cpu_after["workers"] or 0.0) - (cpu_before["workers"] or 0.0)
        rows.append(
            {
                "workers": count,
                "turns": done,
                "failed": failed,
                "seconds": round(elapsed, 1),
                "turns_per_s": round(done / elapsed, 2) if done >= total else None,
                "cpu_pct": share,
                "machine_busy_pct": busy,
                "worker_cpu_ms_per_turn": round(1000 * worker_cpu / max(done, 1), 1),
                "redis_commands_per_turn": round(commands / max(done, 1)),
            }
        )
        log(f"scale: {json.dumps(rows[-1])}")
    return rows


def scale_report(rows: list[dict[str, Any]]) -> None:
    cores = os.cpu_count() or 1
    print(f"turns/s at zero model latency ({cores} CPUs; CPU in % of one core):")
    print(
        f"  {'workers':>7} {'turns/s':>8} {'failed':>6} {'workers %':>9} {'redis %':>8} "
        f"{'pg %':>5} {'machine busy':>12} {'CPU ms/turn':>11} {'Redis cmds/turn':>15}"
    )
    for row in rows:
        cpu = row["cpu_pct"]
        rate = "failed" if row["turns_per_s"] is None else f"{row['turns_per_s']:.1f}"
        busy = row["machine_busy_pct"]
        print(
            f"  {row['workers']:>7} {rate:>8} {row['failed']:>6} "
            f"{cpu['workers'] if cpu['workers'] is not None else '?':>9} "
            f"{cpu['redis'] if cpu['redis'] is not None else '?':>8} "
            f"{cpu['postgres'] if cpu['postgres'] is not None else '?':>5} "
            f"{'?' if busy is None else f'{busy:.0f} %':>12} "
            f"{row['worker_cpu_ms_per_turn']:>11} {row['redis_commands_per_turn']:>15}"
        )
    measured = [r for r in rows if r["turns_per_s"]]
    if len(measured) < 2:
        print("  limit: not measured (a scale run failed)")
        return
    best = max(measured, key=lambda r: r["turns_per_s"])
    one, last = measured[0], measured[-1]
    saturated = (best["machine_busy_pct"] or 0) >= 90
    print(
        f"  limit: {best['turns_per_s']:.1f} turns/s at best ({best['workers']} worker(s), "
        f"{best['turns_per_s'] / one['turns_per_s']:.1f}× one worker). A worker is one Python "
        f"process: one core at most, ~{one['worker_cpu_ms_per_turn']:.0f} ms CPU per turn "
        "(graphs, nodes, stores). "
        + (
            f"With {best['workers']} the machine's {cores} CPUs were {best['machine_busy_pct']:.0f} % "
            "busy (its other processes included): the CPUs are the limit here. "
            if saturated
            else "The CPUs were not saturated at the best point: the limit lies in waiting. "
        )
        + f"Redis commands per turn: {one['redis_commands_per_turn']} with 1 worker, "
        f"{last['redis_commands_per_turn']} with {last['workers']} (workers wait on the "
        "ready list instead of polling: bench/scale.py); CPU per turn "
        f"{last['worker_cpu_ms_per_turn']:.0f} ms with {last['workers']}."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a ≈ 2 minute storm")
    parser.add_argument("--users", type=int, default=None)
    parser.add_argument("--messages", type=int, default=None)
    parser.add_argument("--no-scale", action="store_true", help="skip the turns/s runs")
    parser.add_argument("--scale-only", action="store_true", help="only the turns/s runs")
    parser.add_argument("--keep", action="store_true", help="keep the home (logs) afterwards")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="run on a 3+3 Valkey cluster; the Redis fault kills a master (implies --no-scale)",
    )
    args = parser.parse_args()
    if args.cluster:
        args.no_scale = True  # the turns/s table counts one server's commands
    if args.quick:
        plan = Plan.quick(args.users or 20, args.messages or 8)
    else:
        plan = Plan.full(args.users or 50, args.messages or 20)

    home = Path(tempfile.mkdtemp(prefix="novaberg-chaos-", dir="/tmp"))
    home.chmod(0o755)  # the embedded PostgreSQL runs as its own user when started by root
    (home / "rules.json").write_text(json.dumps(rules(latency=True)), encoding="utf-8")
    (home / "rules-fast.json").write_text(json.dumps(rules(latency=False)), encoding="utf-8")
    cluster = Cluster(
        home, home / "rules.json", {"NOVABERG_MODEL_SLOTS": "8"}, redis_cluster=args.cluster
    )
    before = cpu_times()
    log(f"home {home}")
    result: dict[str, Any] | None = None
    rows: list[dict[str, Any]] = []
    try:
        cluster.start_servers()
        if not args.scale_only:
            try:
                result = asyncio.run(storm(cluster, plan))
            finally:
                cluster.stop_processes()
        if not args.no_scale:
            if args.scale_only:
                users = [f"chaos{i:02d}" for i in range(min(plan.users, 40))]
                asyncio.run(issue_tokens(cluster.database_url, users))
            cluster.rules = home / "rules-fast.json"
            cluster.extra_env = {"NOVABERG_MODEL_SLOTS": "64"}  # the gate is not the limit
            rows = scale(cluster, [f"chaos{i:02d}" for i in range(min(plan.users, 40))], 6)
    finally:
        cluster.stop_processes()
        cluster.stop_servers()
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)
    outcome = None
    if result is not None:
        mode = "quick" if args.quick else "full"
        outcome = report(result, plan, mode + (", 3+3 cluster" if args.cluster else ""))
    if rows:
        scale_report(rows)
    steal = steal_percent(before, cpu_times())
    print(
        f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; CPU steal "
        f"{'unknown' if steal is None else f'{steal:.1f} %'})"
    )
    if outcome is None:
        return 0 if rows and all(r["turns_per_s"] for r in rows) else 1
    total, once, lost, duplicated, _consistent = outcome
    print(f"chaos: {total} accepted, {once} exactly once, {lost} lost, {duplicated} duplicated")
    return 0 if lost == duplicated == 0 and total > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
