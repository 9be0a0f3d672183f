"""Abuse bench: can one signed-in user stop, slow down or outlast another?

One `novaberg api` and one `novaberg worker` run on the project's embedded Valkey and
PostgreSQL in a fresh home, with the scripted model and scripted embeddings. Two users get
a token each. The victim uses the page as a person does: a chat loop (`POST /chat`, then
its answer over the WebSocket, then the next message ~0.5 s after the last one was sent)
and a read loop (one read a second, in turn: `GET /agents/notes`, `GET /characters`,
`GET /history/nova`, `GET /memory/nova/long_term`, `GET /memory/nova/search`; every tenth
tick a note is written and archived). First the victim runs alone (the baseline), then
the same victim runs while the attacker, in a process of its own, replays the attacks of
the hostile-user probe one after another (concurrent where the probe was):

- a card with 100,000 lorebook entries; eight cards of 5,000 entries at once;
- a chat import of one valid line and 4,000,000 junk lines (8 MB); one of 20,000 turns;
- a card with an 11 MB description and four cards with a 14 MB first message at once;
- 3,000-deep nesting on `POST /chat`, `/import/chat`, `/characters` (also with a lone
  surrogate); `DELETE /impulses/auftrag-%C2%B2`;
- the directive limit passed by delete → create → reactivate over HTTP (fill, delete 60,
  create 60, restore the 60);
- `PATCH /settings` for thousands of made-up characters; a flood of writes;
- reading the victim's character: `GET /characters`, `GET /v1/models`, its avatar.

Counted for the victim only: every HTTP request's latency and status, and every chat
message's outcome. An error is a 5xx, a connection error or timeout, any 4xx (every victim
request is valid), a `turn_gescheitert`, no outcome within 30 s, or a dropped WebSocket.
The attacker's own results (statuses, seconds, what leaked) are printed per attack with
the victim's p99 and errors while it ran, but they are not the goal.

Prints one JSON line per attack and per measurement, a table, and as the last line
`abuse: A attacks, other user p99 X s, E errors` (X: the victim's p99 HTTP latency while
the attacks ran; E: the victim's errors then). Exit status 1 unless E == 0 and X <= 2.

    .venv/bin/python bench/abuse.py [--quick] [--keep]
    .venv/bin/python bench/abuse.py --url http://host:8765 --token VICTIM --attacker-token T

`--quick` shrinks the attacks (a tenth of the sizes) and the windows; `--url` aims at a
running server instead of starting one (two tokens of two users; the attacks write there).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import shutil
import struct
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect

from _machine import cpu_times, steal_percent

os.environ.setdefault("HF_HUB_OFFLINE", "1")

GOAL_P99 = 2.0
"""Seconds: the victim's p99 HTTP latency while the attacks run."""
REQUEST_TIMEOUT = 30.0
"""A victim request not answered within this is an error (counted with this latency)."""
OUTCOME_TIMEOUT = 30.0
"""A victim message without its outcome this long after it was sent is an error."""
CHAT_EVERY = 0.5
READ_EVERY = 1.0
VICTIM_CHARACTER = "opfer-geheim"
"""The victim's own character: whether the attacker can see it is one of the attacks."""
RUN_BUDGET = 20 * 60.0
"""The whole run ends (and fails) after this, whatever hangs: `make bench` never waits on it."""

RESPONDER = "Antworte kurz und natürlich"
"""Matches only the responder's prompt."""
ROUTER = {
    "needs_memory": True,
    "needs_web": False,
    "needs_timeline": False,
    "timeline_query": None,
    "momentum": "mid",
    "management_action": "",
    "management_target": "",
    "management_target_typ": "titel",
}
APPROVE = {"score": 0.05, "direktiven_score": 0.05, "begruendung": ""}
THINKER_OK = {"ergebnis": "OK", "probleme": "", "korrigierte_antwort": ""}


def rules() -> list[dict[str, Any]]:
    """Plain conversation with memory search, the tribunal approves; each analysis takes
    30 ms of "model time", the answer 300 ms (a turn of about a second)."""
    verdicts = ("JuristVerdict", "PsychologistVerdict", "EthicistVerdict")
    return [
        {"match": ".*", "schema": "RouterDecision", "output": ROUTER, "latency_ms": 30},
        {"match": ".*", "schema": "PerceptionResult", "output": {}, "latency_ms": 30},
        *({"match": ".*", "schema": n, "output": APPROVE, "latency_ms": 30} for n in verdicts),
        {"match": ".*", "schema": "ThinkerCheck", "output": THINKER_OK, "latency_ms": 30},
        {"match": RESPONDER, "output": "Ich bin da und höre zu.", "latency_ms": 300},
    ]


@dataclass(frozen=True)
class Sizes:
    """What the attacker sends; the full sizes are the probe's."""

    lore_entries: int = 100_000
    cards_at_once: int = 8
    card_entries: int = 5_000
    junk_lines: int = 4_000_000
    real_turns: int = 20_000
    description_bytes: int = 11 * 1024 * 1024
    first_mes_bytes: int = 14 * 1024 * 1024
    first_mes_cards: int = 4
    depth: int = 3_000
    bypass_batch: int = 60
    made_up_characters: int = 3_000
    flood_seconds: float = 10.0
    flood_connections: int = 32
    attack_timeout: float = 30.0
    """Seconds the attacker waits for one request (the server may work on after that)."""
    window: float = 60.0
    """Seconds of the baseline, and the least the victim runs alongside the attacks."""

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            lore_entries=10_000,
            card_entries=1_000,
            junk_lines=400_000,
            real_turns=2_000,
            description_bytes=1_100_000,
            first_mes_bytes=1_400_000,
            bypass_batch=20,
            made_up_characters=500,
            flood_seconds=5.0,
            attack_timeout=15.0,
            window=20.0,
        )


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float | None:
    """Nearest rank; None without values (a missing measurement is never a number)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def png_card(card: dict[str, Any]) -> bytes:
    """A 1×1 PNG carrying `card` in a `chara` text chunk (a card with a picture)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    text = b"chara\x00" + base64.b64encode(json.dumps(card).encode())
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", header),
            chunk(b"tEXt", text),
            chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")),
            chunk(b"IEND", b""),
        ]
    )


# -- the victim ------------------------------------------------------------------------------


@dataclass
class Call:
    phase: str
    at: float
    """Wall-clock start (to match the attacker's windows)."""
    what: str
    status: int | None
    seconds: float
    error: str | None
    """None when the call went as a valid request should."""


@dataclass
class Message:
    phase: str
    at: float
    outcome: str | None = None
    """`character_response`, `turn_gescheitert`, or None (none within the timeout)."""
    reason: str | None = None
    seconds: float | None = None


@dataclass
class Victim:
    url: str
    token: str
    phase: str = "warmup"
    calls: list[Call] = field(default_factory=list)
    messages: dict[str, Message] = field(default_factory=dict)
    outcomes: dict[str, tuple[str, str | None, float]] = field(default_factory=dict)
    drops: list[tuple[str, float]] = field(default_factory=list)
    connected: bool = False
    last_seq: int | None = None
    http: httpx.AsyncClient | None = None

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
        """One request, recorded; the response (read to its end), or None on a failure."""
        assert self.http is not None
        phase, at, began = self.phase, time.time(), time.perf_counter()
        what = f"{method} {path.split('?')[0]}"
        try:
            response = await self.http.request(method, path, headers=auth(self.token), **kwargs)
        except httpx.HTTPError as exc:
            self.calls.append(
                Call(phase, at, what, None, time.perf_counter() - began, type(exc).__name__)
            )
            return None
        status = response.status_code
        error = None if status < 400 else str(status)  # every victim request is valid
        self.calls.append(Call(phase, at, what, status, time.perf_counter() - began, error))
        return response

    async def listen(self, stop: asyncio.Event) -> None:
        """The WebSocket, reconnecting with `since`; a drop while running is an error."""
        ws_url = self.url.replace("http", "ws", 1) + "/ws"
        while not stop.is_set():
            query = f"token={self.token}"
            if self.last_seq is not None:
                query += f"&since={self.last_seq}"
            try:
                async with connect(f"{ws_url}?{query}", max_size=None) as ws:
                    async for raw in ws:
                        self._take(json.loads(raw))
            except Exception:
                pass
            if not stop.is_set():
                self.drops.append((self.phase, time.time()))
                log(f"victim: WebSocket dropped ({self.phase})")
            self.connected = False
            await asyncio.sleep(0.2)

    def _take(self, message: dict[str, Any]) -> None:
        typ = message.get("typ")
        if typ == "verbindung":
            if self.last_seq is None:
                self.last_seq = int(message.get("seq_aktuell") or 0)
            self.connected = True
            return
        seq = message.get("seq")
        if isinstance(seq, int):
            self.last_seq = max(self.last_seq or 0, seq)
        if typ in ("character_response", "turn_gescheitert"):
            for mid in message.get("nachrichten_ids") or []:
                self.outcomes.setdefault(str(mid), (str(typ), message.get("grund"), time.time()))

    async def chat_loop(self, stop: asyncio.Event) -> None:
        n = 0
        while not stop.is_set():
            began = time.monotonic()
            n += 1
            phase, at = self.phase, time.time()
            response = await self.request(
                "POST",
                "/chat",
                json={"character_id": "nova", "text": f"Wie geht es dir, Runde {n}?"},
            )
            if response is not None and response.status_code == 202:
                mid = str(response.json()["nachrichten_id"])
                message = self.messages[mid] = Message(phase, at)
                await self._await_outcome(mid, message)
            await asyncio.sleep(max(0.0, CHAT_EVERY - (time.monotonic() - began)))

    async def _await_outcome(self, mid: str, message: Message) -> None:
        deadline = message.at + OUTCOME_TIMEOUT
        while time.time() < deadline:
            seen = self.outcomes.get(mid)
            if seen is not None:
                message.outcome, message.reason = seen[0], seen[1]
                message.seconds = seen[2] - message.at
                return
            await asyncio.sleep(0.02)

    async def read_loop(self, stop: asyncio.Event) -> None:
        reads = [
            "/agents/notes",
            "/characters",
            "/history/nova",
            "/memory/nova/long_term",
            "/memory/nova/search?q=Wetter",
        ]
        tick = 0
        while not stop.is_set():
            began = time.monotonic()
            if tick % 10 == 9:
                created = await self.request(
                    "POST", "/agents/notes", json={"name": f"Notiz {tick}"}
                )
                if created is not None and created.status_code == 201:
                    await self.request("DELETE", f"/agents/notes/{created.json()['id']}")
            else:
                await self.request("GET", reads[tick % len(reads)])
            tick += 1
            await asyncio.sleep(max(0.0, READ_EVERY - (time.monotonic() - began)))

    async def setup(self) -> None:
        """Its own character, with a picture (before any window: whether the attacker sees it
        is an attack)."""
        card = {
            "spec": "chara_card_v2",
            "data": {
                "name": "Geheime Freundin",
                "description": "GEHEIM: nur für das Opfer bestimmt.",
                "first_mes": "Hallo, nur du kennst mich.",
                "system_prompt": "GEHEIMER SYSTEMPROMPT des Opfers",
            },
        }
        assert self.http is not None
        created = await self.http.post(
            f"/characters?id={VICTIM_CHARACTER}",
            content=png_card(card),
            headers={**auth(self.token), "Content-Type": "image/png"},
        )
        log(f"victim: own character imported ({created.status_code})")


# -- the attacker (a process of its own, so its work never delays the victim's clock) --------


async def attack_call(
    http: httpx.AsyncClient, method: str, path: str, timeout: float, **kwargs: Any
) -> dict[str, Any]:
    """One attacker request: status (or the failure's name), seconds, response bytes."""
    began = time.perf_counter()
    size = 0
    try:
        async with http.stream(method, path, timeout=timeout, **kwargs) as response:
            async for chunk in response.aiter_raw():
                size += len(chunk)
            status = str(response.status_code)
    except httpx.TimeoutException:
        status = "timeout"
    except httpx.HTTPError as exc:
        status = type(exc).__name__
    return {"status": status, "seconds": round(time.perf_counter() - began, 2), "bytes": size}


def summary(calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "statuses": dict(Counter(c["status"] for c in calls)),
        "slowest_s": max((c["seconds"] for c in calls), default=None),
        "response_bytes": sum(c["bytes"] for c in calls),
    }


def card_json(name: str, **data: Any) -> bytes:
    return json.dumps({"spec": "chara_card_v2", "data": {"name": name, **data}}).encode()


def lorebook(name: str, entries: int) -> bytes:
    book = [
        {
            "id": n,
            "keys": [f"stichwort{n}"],
            "content": f"Eintrag {n}: eine Zeile Wissen über das Dorf.",
        }
        for n in range(entries)
    ]
    return card_json(name, description="Ein Lorebook.", character_book={"entries": book})


class Attacker:
    def __init__(self, http: httpx.AsyncClient, sizes: Sizes) -> None:
        self.http = http
        self.sizes = sizes

    async def call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        return await attack_call(self.http, method, path, self.sizes.attack_timeout, **kwargs)

    async def lorebook_100k(self) -> dict[str, Any]:
        body = lorebook("Lore Riese", self.sizes.lore_entries)
        calls = [await self.call("POST", "/characters", content=body, headers=JSON)]
        return {"entries": self.sizes.lore_entries, "body_bytes": len(body), **summary(calls)}

    async def lorebooks_at_once(self) -> dict[str, Any]:
        bodies = [
            lorebook(f"Lore {i}", self.sizes.card_entries) for i in range(self.sizes.cards_at_once)
        ]
        calls = await asyncio.gather(
            *(self.call("POST", "/characters", content=b, headers=JSON) for b in bodies)
        )
        return {"cards": len(bodies), "entries_each": self.sizes.card_entries, **summary(calls)}

    async def chat_import_junk(self) -> dict[str, Any]:
        valid = {
            "id": "a1",
            "speaker": "user",
            "text": "Hallo",
            "time": "2026-01-10T10:00:00+01:00",
        }
        body = json.dumps(valid).encode() + b"\n" + b"x\n" * self.sizes.junk_lines
        calls = [
            await self.call("POST", "/import/chat?character=nova", content=body, headers=NDJSON)
        ]
        return {"junk_lines": self.sizes.junk_lines, "body_bytes": len(body), **summary(calls)}

    async def chat_import_turns(self) -> dict[str, Any]:
        lines = [
            json.dumps(
                {
                    "id": f"t{n}",
                    "speaker": "user" if n % 2 == 0 else "character",
                    "text": f"Ein ganz gewöhnlicher Satz Nummer {n} über das Wetter.",
                    "time": 1_700_000_000 + 60 * n,
                }
            )
            for n in range(self.sizes.real_turns)
        ]
        body = "\n".join(lines).encode()
        calls = [
            await self.call("POST", "/import/chat?character=nova", content=body, headers=NDJSON)
        ]
        return {"turns": self.sizes.real_turns, "body_bytes": len(body), **summary(calls)}

    async def big_fields(self) -> dict[str, Any]:
        bodies = [card_json("Lange Beschreibung", description="x" * self.sizes.description_bytes)]
        bodies += [
            card_json(
                f"Lange Begrüßung {i}",
                description="d",
                first_mes="y" * self.sizes.first_mes_bytes,
            )
            for i in range(self.sizes.first_mes_cards)
        ]
        calls = await asyncio.gather(
            *(self.call("POST", "/characters", content=b, headers=JSON) for b in bodies)
        )
        listed = await self.call("GET", "/characters")
        return {
            "cards": len(bodies),
            **summary(list(calls)),
            "get_characters_bytes_after": listed["bytes"],
        }

    async def deep_nesting(self) -> dict[str, Any]:
        depth = self.sizes.depth
        deep = "[" * depth + "]" * depth
        bodies = {
            "/chat": f'{{"character_id": "nova", "text": {deep}}}',
            "/import/chat?character=nova": deep,
            "/characters": f'{{"spec": "chara_card_v2", "data": {{"name": "Tief", "x": {deep}}}}}',
        }
        calls = []
        for path, body in bodies.items():
            for surrogate in (False, True):
                text = body.replace("[", '["\\ud800", ', 1) if surrogate else body
                call = await self.call("POST", path, content=text.encode(), headers=JSON)
                calls.append({**call, "path": path, "surrogate": surrogate})
        return {
            "depth": depth,
            **summary(calls),
            "each": {
                f"{c['path']}{' +surrogate' if c['surrogate'] else ''}": c["status"] for c in calls
            },
        }

    async def directive_bypass(self) -> dict[str, Any]:
        """Fill the directives to the limit (the first 409), delete `bypass_batch` of them,
        create as many new ones, restore the deleted: how many are active in the end."""
        deadline = time.monotonic() + 4 * self.sizes.attack_timeout
        statuses: Counter[str] = Counter()

        async def write(method: str, path: str, **kwargs: Any) -> httpx.Response | None:
            """The answer; a 429 is waited out and a connection the server closed is tried
            again (the attack goes on); None if it cannot be had."""
            broken = 0
            while time.monotonic() < deadline:
                try:
                    r = await self.http.request(
                        method, path, timeout=self.sizes.attack_timeout, **kwargs
                    )
                except httpx.TimeoutException:
                    statuses["timeout"] += 1
                    return None
                except httpx.TransportError as exc:
                    statuses[type(exc).__name__] += 1
                    broken += 1
                    if broken > 3:
                        return None
                    continue
                if r.status_code != 429:
                    statuses[f"{method} {r.status_code}"] += 1
                    return r
                statuses["429"] += 1
                await asyncio.sleep(float(r.headers.get("retry-after", "1")))
            return None

        limit_at = None  # stays None unless the server said 409: a failed fill measures nothing
        for n in range(1000):
            r = await write("POST", "/agents/directives", json={"anweisung": f"Regel {n}"})
            if r is not None and r.status_code == 409:
                limit_at = n
            if r is None or r.status_code != 201:
                break
        first = await self.http.get("/agents/directives", timeout=self.sizes.attack_timeout)
        ids = [row["id"] for row in first.json()] if first.status_code == 200 else []
        batch = ids[: self.sizes.bypass_batch]
        for rule_id in batch:  # room for `batch` new ones ...
            await write("DELETE", f"/agents/directives/{rule_id}")
        for i in range(len(batch)):  # ... filled again ...
            await write("POST", "/agents/directives", json={"anweisung": f"Neue Regel {i}"})
        restored = Counter[str]()
        for rule_id in batch:  # ... and the deleted ones restored on top
            r = await write("POST", f"/agents/directives/{rule_id}/reactivate")
            restored[str(r.status_code if r is not None else "failed")] += 1
        final = await self.http.get("/agents/directives", timeout=self.sizes.attack_timeout)
        active = len(final.json()) if final.status_code == 200 else None
        return {
            "batch": self.sizes.bypass_batch,
            "limit_reached_at": limit_at,
            "reactivations": dict(restored),
            "active_after": active,
            "bypassed": None if active is None or limit_at is None else active > limit_at,
            "statuses": dict(statuses),
        }

    async def impulse_superscript(self) -> dict[str, Any]:
        calls = [await self.call("DELETE", "/impulses/auftrag-%C2%B2")]
        return summary(calls)

    async def settings_made_up(self) -> dict[str, Any]:
        """`PATCH /settings` for characters that do not exist, 16 at a time."""
        queue = list(range(self.sizes.made_up_characters))
        calls: list[dict[str, Any]] = []

        async def worker() -> None:
            while queue:
                n = queue.pop()
                body = {"character_id": f"erfunden-{n}", "impulse": False}
                calls.append(await self.call("PATCH", "/settings", json=body))

        await asyncio.gather(*(worker() for _ in range(16)))
        return {"characters": self.sizes.made_up_characters, **summary(calls)}

    async def write_flood(self) -> dict[str, Any]:
        """Writes as fast as answered, from many connections, for a few seconds."""
        end = time.monotonic() + self.sizes.flood_seconds
        calls: list[dict[str, Any]] = []

        async def worker(k: int) -> None:
            n = 0
            while time.monotonic() < end:
                n += 1
                calls.append(await self.call("PATCH", "/settings", json={"pro_tag": (k + n) % 50}))

        await asyncio.gather(*(worker(k) for k in range(self.sizes.flood_connections)))
        seconds = self.sizes.flood_seconds
        return {
            "requests": len(calls),
            "per_second": round(len(calls) / seconds, 1),
            **summary(calls),
        }

    async def read_victim(self) -> dict[str, Any]:
        listed = await self.http.get("/characters", timeout=self.sizes.attack_timeout)
        models = await self.http.get("/v1/models", timeout=self.sizes.attack_timeout)
        avatar = await self.call("GET", f"/characters/{VICTIM_CHARACTER}/avatar")
        leaks = {
            "in_get_characters": VICTIM_CHARACTER in listed.text,
            "system_prompt_in_get_characters": "GEHEIMER SYSTEMPROMPT" in listed.text,
            "in_v1_models": VICTIM_CHARACTER in models.text,
            "avatar_status": avatar["status"],
        }
        leaked = leaks["in_get_characters"] or leaks["in_v1_models"] or avatar["status"] == "200"
        return {"leaked": leaked, **leaks}


JSON = {"Content-Type": "application/json"}
NDJSON = {"Content-Type": "application/x-ndjson"}

ATTACKS: list[str] = [
    "lorebook_100k",
    "lorebooks_at_once",
    "chat_import_junk",
    "chat_import_turns",
    "big_fields",
    "deep_nesting",
    "directive_bypass",
    "impulse_superscript",
    "settings_made_up",
    "write_flood",
    "read_victim",
]


async def attacker_main(url: str, token: str, sizes: Sizes) -> None:
    """Every attack in turn; one JSON line each on stdout (the parent reads them)."""
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=url, headers=auth(token), limits=limits) as http:
        attacker = Attacker(http, sizes)
        for name in ATTACKS:
            log(f"attacker: {name}")
            started = time.time()
            run: Callable[[], Awaitable[dict[str, Any]]] = getattr(attacker, name)
            try:
                result = await asyncio.wait_for(run(), 6 * sizes.attack_timeout)
            except TimeoutError:
                result = {"failed": "the attack did not end in time"}
            except Exception as exc:  # the attack broke, not the bench: say so and go on
                result = {"failed": f"{type(exc).__name__}: {exc}"[:300]}
            line = {"attack": name, "started": started, "ended": time.time(), **result}
            print(json.dumps(line), flush=True)


# -- the run ---------------------------------------------------------------------------------


@dataclass
class Window:
    """What the victim saw in one stretch of time."""

    requests: int
    p50_s: float | None
    p99_s: float | None
    max_s: float | None
    errors: int
    http_errors: dict[str, int]
    messages: int
    answered: int
    failed: int
    failed_reasons: dict[str, int]
    missing: int
    answer_p99_s: float | None
    socket_drops: int


def window(victim: Victim, start: float, end: float, phase: str | None = None) -> Window:
    """The victim's calls and messages that began in [start, end) (or in `phase`)."""

    def inside(p: str, at: float) -> bool:
        return p == phase if phase is not None else start <= at < end

    calls = [c for c in victim.calls if inside(c.phase, c.at)]
    messages = [m for m in victim.messages.values() if inside(m.phase, m.at)]
    latency = [c.seconds for c in calls]
    errors = Counter(f"{c.what} {c.error}" for c in calls if c.error is not None)
    answered = sum(1 for m in messages if m.outcome == "character_response")
    failed = sum(1 for m in messages if m.outcome == "turn_gescheitert")
    missing = sum(1 for m in messages if m.outcome is None)
    drops = sum(1 for p, at in victim.drops if inside(p, at))
    answers = [m.seconds for m in messages if m.seconds is not None]
    return Window(
        requests=len(calls),
        p50_s=rounded(percentile(latency, 0.5)),
        p99_s=rounded(percentile(latency, 0.99)),
        max_s=rounded(max(latency, default=None)),
        errors=sum(errors.values()) + failed + missing + drops,
        http_errors=dict(errors),
        messages=len(messages),
        answered=answered,
        failed=failed,
        failed_reasons=dict(
            Counter(str(m.reason) for m in messages if m.outcome == "turn_gescheitert")
        ),
        missing=missing,
        answer_p99_s=rounded(percentile(answers, 0.99)),
        socket_drops=drops,
    )


async def run(
    url: str, victim_token: str, attacker_token: str, sizes: Sizes, quick: bool
) -> tuple[Victim, dict[str, tuple[float, float]], list[dict[str, Any]]]:
    victim = Victim(url, victim_token)
    stop, quit_loops = asyncio.Event(), asyncio.Event()
    phases: dict[str, tuple[float, float]] = {}
    attacks: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT) as http:
        victim.http = http
        listener = asyncio.create_task(victim.listen(stop))
        while not victim.connected:
            await asyncio.sleep(0.05)
        await victim.setup()
        loops = [
            asyncio.create_task(victim.chat_loop(quit_loops)),
            asyncio.create_task(victim.read_loop(quit_loops)),
        ]
        await asyncio.sleep(5.0)  # warm-up: first turn, caches, connections
        victim.phase = "baseline"
        began = time.time()
        log(f"baseline: the victim alone for {sizes.window:.0f} s")
        await asyncio.sleep(sizes.window)
        phases["baseline"] = (began, time.time())
        victim.phase = "attacks"
        began = time.time()
        log("attacks: the attacker starts")
        command = [sys.executable, __file__, "--attacker", "--url", url, "--token", attacker_token]
        proc = await asyncio.create_subprocess_exec(
            *command, *(["--quick"] if quick else []), stdout=asyncio.subprocess.PIPE
        )
        assert proc.stdout is not None
        try:
            async for raw in proc.stdout:
                line = raw.decode(errors="replace").strip()
                if line.startswith("{"):
                    attacks.append(json.loads(line))
            await proc.wait()
        finally:
            if proc.returncode is None:  # the run's budget ended it: no orphan attacker
                proc.kill()
                await proc.wait()
        rest = began + sizes.window - time.time()
        if rest > 0:  # the attack window lasts at least as long as the baseline
            await asyncio.sleep(rest)
        phases["attacks"] = (began, time.time())
        victim.phase = "after"
        quit_loops.set()
        log("attacks over: waiting for the victim's last answers")
        await asyncio.gather(*loops)
        stop.set()
        listener.cancel()
        await asyncio.gather(listener, return_exceptions=True)
    return victim, phases, attacks


def report(
    victim: Victim,
    phases: dict[str, tuple[float, float]],
    attacks: list[dict[str, Any]],
    server: dict[str, Any],
) -> tuple[int, float | None, int]:
    baseline = window(victim, *phases.get("baseline", (0.0, 0.0)), phase="baseline")
    during = window(victim, *phases.get("attacks", (0.0, 0.0)), phase="attacks")
    for name, stats in (("baseline", baseline), ("attacks", during)):
        start, end = phases.get(name, (0.0, 0.0))
        print(
            json.dumps(
                {
                    "measure": "victim",
                    "phase": name,
                    "seconds": round(end - start, 1),
                    **asdict(stats),
                }
            )
        )
    for attack in attacks:
        seen = window(victim, attack["started"], attack["ended"])
        line = {
            **{k: v for k, v in attack.items() if k not in ("started", "ended")},
            "seconds": round(attack["ended"] - attack["started"], 1),
            "victim": {"requests": seen.requests, "p99_s": seen.p99_s, "errors": seen.errors},
        }
        print(json.dumps(line))
    for name, value in server.items():
        print(json.dumps({"measure": name, "value": value}))

    def cell(value: float | None) -> str:
        return "null" if value is None else f"{value:.2f}"

    print(f"{'':<22} {'requests':>8} {'p50 s':>7} {'p99 s':>7} {'max s':>7} {'errors':>6}  chat")
    for name, stats in (("victim alone", baseline), ("victim under attack", during)):
        print(
            f"{name:<22} {stats.requests:>8} {cell(stats.p50_s):>7} {cell(stats.p99_s):>7} "
            f"{cell(stats.max_s):>7} {stats.errors:>6}  {stats.answered}/{stats.messages} "
            f"answered, {stats.failed} failed, {stats.missing} without outcome, "
            f"{stats.socket_drops} socket drops"
        )
    for key, n in sorted(during.http_errors.items()):
        print(f"    {n:5d} × {key}")
    print(f"{'attack':<22} {'seconds':>8} {'victim p99':>10} {'errors':>6}  attacker saw")
    for attack in attacks:
        seen = window(victim, attack["started"], attack["ended"])
        said = (
            attack.get("failed")
            or attack.get("statuses")
            or {k: attack[k] for k in ("leaked", "active_after") if k in attack}
        )
        if "leaked" in attack:
            said = f"leaked: {attack['leaked']}"
        if "active_after" in attack:
            said = (
                f"{attack['active_after']} directives active, limit at {attack['limit_reached_at']}"
            )
        print(
            f"{attack['attack']:<22} {attack['ended'] - attack['started']:>8.1f} "
            f"{cell(seen.p99_s):>10} {seen.errors:>6}  {said}"
        )
    return len(attacks), during.p99_s, during.errors


def peak_rss_mb(pid: int) -> int | None:
    """The process's peak resident memory (VmHWM) in MiB, from /proc; None if unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def count_settings_rows(database_url: str) -> int | None:
    import psycopg

    try:
        with psycopg.connect(database_url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM impuls_einstellungen WHERE character_id LIKE 'erfunden-%'"
            ).fetchone()
            return int(row[0]) if row else None
    except psycopg.Error:
        return None


async def issue_tokens(database_url: str, users: list[str]) -> dict[str, str]:
    from novaberg.store.postgres import create_pool
    from novaberg.store.users import issue_token

    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        return {u: (await issue_token(pool, u, "abuse")).token for u in users}
    finally:
        await pool.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller attacks, shorter windows")
    parser.add_argument("--url", help="a running server instead of starting one")
    parser.add_argument("--token", help="with --url: the victim's token")
    parser.add_argument("--attacker-token", help="with --url: another user's token")
    parser.add_argument("--keep", action="store_true", help="keep the home (logs) afterwards")
    parser.add_argument("--attacker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = Sizes.quick() if args.quick else Sizes()
    if args.attacker:
        asyncio.run(attacker_main(args.url, args.token, sizes))
        return 0
    before = cpu_times()
    outcome: tuple[int, float | None, int] | None = None
    if args.url:
        if not (args.token and args.attacker_token):
            parser.error("--url needs --token and --attacker-token (two users)")
        result = bounded_run(args.url, args.token, args.attacker_token, sizes, args.quick)
        unknown = {"made_up_settings_rows": None, "api_peak_rss_mb": None}
        outcome = None if result is None else report(*result, unknown)
    else:
        outcome = own_cluster(sizes, args.quick, args.keep)
    steal = steal_percent(before, cpu_times())
    print(
        f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; CPU steal "
        f"{'unknown' if steal is None else f'{steal:.1f} %'})"
    )
    count, p99, errors = outcome if outcome is not None else (0, None, None)
    shown = "null" if p99 is None else f"{p99:.2f}"
    print(
        f"abuse: {count} attacks, other user p99 {shown} s, "
        f"{'null' if errors is None else errors} errors"
    )
    return 0 if errors == 0 and p99 is not None and p99 <= GOAL_P99 else 1


def bounded_run(
    url: str, victim_token: str, attacker_token: str, sizes: Sizes, quick: bool
) -> tuple[Victim, dict[str, tuple[float, float]], list[dict[str, Any]]] | None:
    """`run` within the budget; None (nothing measured) if it did not end in time."""
    try:
        return asyncio.run(
            asyncio.wait_for(run(url, victim_token, attacker_token, sizes, quick), RUN_BUDGET)
        )
    except TimeoutError:
        log(f"the run did not end within {RUN_BUDGET:.0f} s")
        return None


def own_cluster(sizes: Sizes, quick: bool, keep: bool) -> tuple[int, float | None, int] | None:
    from _cluster import Cluster

    home = Path(tempfile.mkdtemp(prefix="novaberg-abuse-", dir="/tmp"))
    home.chmod(0o755)  # the embedded PostgreSQL runs as its own user when started by root
    (home / "rules.json").write_text(json.dumps(rules()), encoding="utf-8")
    cluster = Cluster(home, home / "rules.json", {"NOVABERG_MODEL_SLOTS": "8"})
    log(f"home {home}")
    try:
        cluster.start_servers()
        tokens = asyncio.run(issue_tokens(cluster.database_url, ["opfer", "angreifer"]))
        cluster.start_api()
        cluster.wait_registered([cluster.start_worker()])
        result = bounded_run(cluster.url, tokens["opfer"], tokens["angreifer"], sizes, quick)
        if result is None:
            return None
        server = {
            "made_up_settings_rows": count_settings_rows(cluster.database_url),
            "api_peak_rss_mb": peak_rss_mb(cluster.api.pid) if cluster.api else None,
        }
        crashed = [p.name for p in cluster.procs if not p.alive()]
        if crashed:
            log(f"processes that exited on their own: {', '.join(crashed)}")
        return report(*result, server)
    finally:
        cluster.stop_processes()
        cluster.stop_servers()
        if not keep:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
