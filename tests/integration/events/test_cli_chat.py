"""`novaberg chat` as a person uses it: the shipped command in a pseudo-terminal of 80
columns, against the real app, queues, workers and graphs (scripted model only)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import redis.asyncio as aioredis
from event_helpers import RESPONDER, WAIT, Running, script_answer

from novaberg.events.model import impulse_event
from novaberg.events.queues import push_event
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.short_term import ShortTermStore
from terminal_screen import screen_lines

SRC = Path(__file__).resolve().parents[3] / "src"
PAIR = Pair("anna", "nova")
COLUMNS = 80
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

ANSWER = (
    "Mein Tag war ruhig und voller kleiner Dinge: ein Buch am Morgen, ein langer "
    "Spaziergang am Nachmittag und jetzt das Gespräch mit dir, auf das ich mich gefreut habe."
)
THOUGHT = "Ich musste gerade an deinen Ausflug zum Bergsee denken. Wie war das Wasser?"


class Terminal:
    """A program in a pseudo-terminal of COLUMNS columns; what it wrote, without colours."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.master = master
        self.raw = ""
        self.seen = 0
        self.closed = False
        self._arrived = asyncio.Event()
        asyncio.get_running_loop().add_reader(master, self._read)

    def _read(self) -> None:
        try:
            data = os.read(self.master, 65536)
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self.master)
            self.closed = True
        self.raw += data.decode("utf-8", errors="replace")
        self._arrived.set()

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw)

    async def expect(self, wanted: str, timeout: float = WAIT) -> None:
        """Wait until `wanted` appears after the previous match (line breaks and the
        continuation indent of a wrapped block count as one space)."""

        def flat(text: str) -> str:
            return re.sub(r"\s*[\r\n]+\s*", " ", text)

        deadline = time.monotonic() + timeout
        while True:
            rest = flat(self.text[self.seen :])
            if flat(wanted) in rest:
                self.seen += len(self.text[self.seen :]) - len(rest) + rest.index(flat(wanted))
                self.seen = min(self.seen, len(self.text))
                return
            assert not self.closed, f"the program ended before {wanted!r}:\n{self.text}"
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {wanted!r} within {timeout} s; the screen:\n{self.text}"
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> None:
        if not self.closed:
            asyncio.get_running_loop().remove_reader(self.master)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        os.close(self.master)


async def post_run_done(redis: aioredis.Redis) -> None:
    """Wait (bounded) until the running turn's post-run (memory, imprint) has finished."""
    for _ in range(200):
        if not await redis.exists(keys.turn_marker(PAIR)):
            return
        await asyncio.sleep(0.05)


def chat(server: Running, token: str, home: Path) -> Terminal:
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "NOVABERG_HOME": str(home),
        "TERM": "xterm",
        "COLUMNS": str(COLUMNS),
    }
    argv = [sys.executable, "-m", "novaberg.cli", "chat", "--url", server.url, "--token", token]
    return Terminal([*argv, "--character", "nova"], env)


async def test_a_conversation_in_the_terminal(
    server: Running,
    token,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    model: ModelLayer,
    tmp_path: Path,
) -> None:
    anna = await token("anna")
    script_answer(scripted, ANSWER)
    scripted.add(f"(?=.*{RESPONDER})(?=.*Ausflug)", THOUGHT)
    await workers()
    term = chat(server, anna, tmp_path)
    try:
        await term.expect("Nova · ")
        await term.expect("du> ")
        term.type("Hallo Nova, wie war dein Tag?")
        await term.expect("… Nova nimmt wahr")  # the live stage line
        await term.expect(f"Nova: {ANSWER}")
        await term.expect("du> ")
        await post_run_done(redis)  # her work after the answer sent its stage lines
        after_answer = term.text[term.text.index("Nova: ") :]
        print(repr(after_answer[-120:]))
        assert "… Nova" not in after_answer, "no stage line over the prompt after the answer"

        impulse = impulse_event(
            "anna",
            "nova",
            "Anna war neulich auf einem Ausflug",
            thought_arousal=0.5,
            trigger_turn_id=None,
        )
        await push_event(redis, impulse)
        await term.expect(f"Nova (eigener Gedanke): {THOUGHT}")

        term.type("/history")
        await term.expect("Verlauf")
        await term.expect("du: Hallo Nova, wie war dein Tag?")
        await term.expect(f"Nova: {ANSWER}")

        await post_run_done(redis)  # the impulse's post-run writes memory: first let it end
        vector = (await model.embed(["Zitronenkuchen"]))[0]
        await ShortTermStore(redis).create(
            PAIR,
            {"inhalt": "Anna backt am liebsten Zitronenkuchen", "themen": "backen"},
            vector,
            ttl_seconds=3600,
            epoch_ms=int(time.time() * 1000),
        )
        term.type("/memory Zitronenkuchen")
        await term.expect("Gedächtnis zu „Zitronenkuchen“")
        await term.expect("[kurzzeit]: Anna backt am liebsten Zitronenkuchen")

        term.type("/quit")
        for _ in range(100):
            if term.proc.poll() is not None:
                break
            await asyncio.sleep(0.05)
        assert term.proc.poll() == 0, term.text
    finally:
        term.close()
    shown = screen_lines(term.raw)
    print("\n".join(shown))
    for typed in ("/history", "/memory Zitronenkuchen", "/quit"):
        assert f"du> {typed}" in shown, f"{typed!r} on its own prompt line, nothing glued"
    segments = [s for line in re.split(r"[\r\n]", term.text) for s in [line] if s]
    too_wide = [s for s in segments if len(s) > COLUMNS]
    assert not too_wide, f"wider than {COLUMNS} columns: {too_wide}"
    assert any(s.startswith("Nova: ") for s in segments)
    assert not any(ANSWER in s for s in segments), "the long answer is wrapped"


async def test_a_failed_turn_and_a_bad_token_are_said(
    server: Running, token, workers, scripted: ScriptedLLM, tmp_path: Path
) -> None:
    anna = await token("anna")
    script_answer(scripted, "", fault="timeout")
    await workers()
    term = chat(server, anna, tmp_path)
    try:
        await term.expect("du> ")
        term.type("Bist du da?")
        await term.expect("keine Antwort: Das Sprachmodell hat zu lange gebraucht.")
        term.type("/quit")
    finally:
        term.close()
    refused = chat(server, "kein-token", tmp_path)
    try:
        await refused.expect("does not know this token")
        for _ in range(100):
            if refused.proc.poll() is not None:
                break
            await asyncio.sleep(0.05)
        assert refused.proc.poll() == 2
    finally:
        refused.close()
