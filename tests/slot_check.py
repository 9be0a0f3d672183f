"""Test-only watch that every script and transaction keeps to one Redis Cluster slot.

A single Redis accepts a script or MULTI block whose keys hash to different slots; a
cluster refuses it. This watch lets the event scenarios prove the key layout on a single
Redis: a MONITOR connection sees every EVAL/EVALSHA of every client (the intake's own
protocol client too) with its declared keys, followed by the commands the script ran
(`[0 lua]`), whose keys must be in the same slot; transactions are checked where redis-py
queues them (`Pipeline.execute` with `transaction=True`), from the command stack.

`SlotWatch.violations()` lists what would fail in a cluster: the command, its keys and
their slots. Nothing here is product code.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlparse

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.crc import key_slot

SCRIPT_COMMANDS = {b"EVAL", b"EVALSHA", b"EVAL_RO", b"EVALSHA_RO", b"FCALL", b"FCALL_RO"}


def parse_monitor_line(line: bytes) -> tuple[str, list[bytes]] | None:
    """(origin, args) of one MONITOR line `+<time> [<db> <origin>] "ARG" "ARG" ...`."""
    start = line.find(b"[")
    end = line.find(b"] ", start)
    if start < 0 or end < 0:
        return None
    origin = line[start + 1 : end].split(b" ", 1)[-1].decode("utf-8", "replace")
    return origin, _unquote_all(line[end + 2 :].rstrip(b"\r\n"))


def _unquote_all(text: bytes) -> list[bytes]:
    args: list[bytes] = []
    i, n = 0, len(text)
    escapes = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("a"): b"\a", ord("b"): b"\b"}
    while i < n:
        if text[i] != ord('"'):
            i += 1
            continue
        i += 1
        out = bytearray()
        while i < n and text[i] != ord('"'):
            if text[i] == ord("\\") and i + 1 < n:
                nxt = text[i + 1]
                if nxt == ord("x") and i + 3 < n:
                    out.append(int(text[i + 2 : i + 4], 16))
                    i += 4
                    continue
                out += escapes.get(nxt, bytes([nxt]))
                i += 2
                continue
            out.append(text[i])
            i += 1
        args.append(bytes(out))
        i += 1
    return args


class KeySpecs:
    """Which arguments of a command are keys (COMMAND INFO's first/last/step)."""

    def __init__(self, specs: dict[bytes, tuple[int, int, int]]) -> None:
        self.specs = specs

    @classmethod
    async def load(cls, redis: aioredis.Redis) -> KeySpecs:
        raw = await redis.execute_command("COMMAND", "INFO")
        specs: dict[bytes, tuple[int, int, int]] = {}
        items = raw.values() if isinstance(raw, dict) else raw
        for info in items:
            if not info:
                continue
            if isinstance(info, dict):
                name = str(info["name"]).upper().encode()
                first, last, step = info["first_key_pos"], info["last_key_pos"], info["step_count"]
            else:
                name = (info[0] if isinstance(info[0], bytes) else str(info[0]).encode()).upper()
                first, last, step = int(info[3]), int(info[4]), int(info[5])
            specs[name] = (int(first), int(last), int(step))
        return cls(specs)

    def keys(self, args: Sequence[bytes]) -> list[bytes]:
        if not args:
            return []
        name = args[0].upper()
        if name in SCRIPT_COMMANDS:
            count = int(args[2]) if len(args) > 2 else 0
            return list(args[3 : 3 + count])
        first, last, step = self.specs.get(name, (0, 0, 0))
        if first <= 0 or step <= 0:
            return []
        stop = len(args) + last if last < 0 else last
        return [args[i] for i in range(first, min(stop, len(args) - 1) + 1, step)]


def slots_of(keys: Sequence[bytes]) -> set[int]:
    return {key_slot(key) for key in keys if key}


class SlotWatch:
    """MONITOR the server while the watched scenario runs; collect cross-slot steps."""

    def __init__(self, redis_url: str, client: aioredis.Redis) -> None:
        self.url = urlparse(redis_url)
        self.client = client
        self.found: list[str] = []
        self.scripts_seen = 0
        self.transactions_seen = 0
        self._specs: KeySpecs | None = None
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._task: asyncio.Task[None] | None = None
        self._end = f"slot-watch-end-{uuid.uuid4().hex}".encode()
        self._ended = asyncio.Event()

    async def start(self) -> None:
        self._specs = await KeySpecs.load(self.client)
        if self.url.scheme == "unix":
            reader, writer = await asyncio.open_unix_connection(self.url.path, limit=1 << 26)
        else:
            host, port = self.url.hostname or "localhost", self.url.port or 6379
            reader, writer = await asyncio.open_connection(host, port, limit=1 << 26)
        writer.write(b"MONITOR\r\n")
        await writer.drain()
        assert (await reader.readline()).startswith(b"+OK")
        self._reader, self._writer = reader, writer
        self._task = asyncio.create_task(self._read())

    async def stop(self) -> None:
        """Read everything the server sent up to now, then close."""
        await self.client.echo(self._end.decode())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ended.wait(), 60)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._writer is not None:
            self._writer.close()

    def violations(self) -> list[str]:
        """Each distinct finding once (a script redis-py retries after NOSCRIPT shows twice)."""
        return list(dict.fromkeys(self.found))

    async def _read(self) -> None:
        assert self._reader is not None and self._specs is not None
        script: tuple[bytes, set[int]] | None = None
        while True:
            line = await self._reader.readline()
            if not line:
                return
            parsed = parse_monitor_line(line)
            if parsed is None:
                continue
            origin, args = parsed
            if not args:
                continue
            if args[0].upper() == b"ECHO" and len(args) > 1 and args[1] == self._end:
                self._ended.set()
                continue
            if origin == "lua":
                if script is not None:
                    inner = slots_of(self._specs.keys(args))
                    if inner - script[1]:
                        self.found.append(
                            f"script {script[0][:60]!r} runs {args[0].decode()} on "
                            f"{[k.decode('utf-8', 'replace') for k in self._specs.keys(args)]}"
                            f" outside its slot(s) {sorted(script[1])}"
                        )
                continue
            script = None
            if args[0].upper() in SCRIPT_COMMANDS:
                self.scripts_seen += 1
                keys = self._specs.keys(args)
                slots = slots_of(keys)
                label = args[1] if args[0].upper().startswith(b"EVALSHA") else args[1][:60]
                if len(slots) > 1:
                    self.found.append(
                        f"script {label[:60]!r} declares keys in {len(slots)} slots: "
                        f"{[k.decode('utf-8', 'replace') for k in keys]}"
                    )
                script = (label, slots)

    def check_transaction(self, stack: Sequence[Sequence[Any]]) -> None:
        assert self._specs is not None
        self.transactions_seen += 1
        keys: list[bytes] = []
        for command in stack:
            args = [a if isinstance(a, bytes) else str(a).encode() for a in command]
            keys += self._specs.keys(args)
        if len(slots_of(keys)) > 1:
            self.found.append(
                f"transaction touches {len(slots_of(keys))} slots: "
                f"{[k.decode('utf-8', 'replace') for k in keys]}"
            )


@contextlib.contextmanager
def watching_transactions(watch: SlotWatch) -> Iterator[None]:
    """Check every redis-py MULTI/EXEC block (`pipeline(transaction=True)`) while inside."""
    original = Pipeline.execute

    async def execute(self: Pipeline, raise_on_error: bool = True) -> Any:
        if (self.is_transaction or self.explicit_transaction) and self.command_stack:
            watch.check_transaction([args for args, _options in self.command_stack])
        return await original(self, raise_on_error)

    Pipeline.execute = execute  # type: ignore[method-assign]
    try:
        yield
    finally:
        Pipeline.execute = original  # type: ignore[method-assign]
