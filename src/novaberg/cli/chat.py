"""`novaberg chat`: a terminal client of a running server, over HTTP and the WebSocket.

What the person types goes to `POST /chat`; everything the server sends the user arrives
over `GET /ws` and is shown as it comes: a live stage line while Nova works, her answers,
her own thoughts (impulses, marked as such), her questions (marked, with the answer they
wait for) and a receipt line per change she stored, failed turns, and what the person wrote
on another device. `/history`, `/memory QUERY` and `/quit` read the HTTP API. Lines are
wrapped to the terminal (at most 80 columns), so it reads in an 80-column terminal.

Defaults: the local server of `NOVABERG_HOST`/`NOVABERG_PORT`, the page token that
`novaberg serve` keeps in `$NOVABERG_HOME/page_token`, the character `NOVABERG_CHARACTER`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import textwrap
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, TextIO
from urllib.parse import quote

import httpx
import typer

from novaberg.api.error_sentences import FIELD_SENTENCE, failure_sentence
from novaberg.config import PAGE_TOKEN_FILE, Settings, SettingsError, load_settings
from novaberg.wire import (
    FIELD_AWAITING,
    FIELD_CHANGES,
    FIELD_ORIGIN,
    MSG_FAILED,
    MSG_HELLO,
    MSG_RESPONSE,
    MSG_STAGE,
    MSG_UTTERANCE,
    ORIGIN_OWN_THOUGHT,
    QUESTION_CHOICE,
    QUESTION_YES_NO,
)

MAX_WIDTH = 80
PROMPT = "du> "
HISTORY_TURNS = 20
RECONNECT_SECONDS = 1.0
AWAIT_LIMIT = 180.0
CLOSE_UNAUTHORIZED = 4401
HELP = (
    "Befehle: /history (der Verlauf), /memory SUCHE (was Nova davon weiß), /quit. "
    "Alles andere geht als Nachricht an {name}."
)

ANSWER_HINTS = {
    QUESTION_YES_NO: "antworte mit ja oder nein",
    QUESTION_CHOICE: "antworte mit dem, den du meinst",
}
"""What the terminal adds under a question, by the kind of answer it waits for."""

BOLD, DIM, RED, CYAN, MAGENTA, RESET = (f"\x1b[{c}m" for c in ("1", "2", "31", "36", "35", "0"))
CLEAR_LINE = "\r\x1b[K"


class ChatError(Exception):
    """A reason the client cannot start (no server, bad token, unknown character)."""


def chat_command(
    url: Annotated[
        str | None,
        typer.Option(help="Server URL (default: http://NOVABERG_HOST:NOVABERG_PORT)."),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(help="API token (default: the page token in $NOVABERG_HOME/page_token)."),
    ] = None,
    character: Annotated[
        str | None, typer.Option(help="Character id [NOVABERG_CHARACTER].")
    ] = None,
) -> None:
    """Chat with a character in the terminal (the server must be running)."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        raise typer.Exit(2) from None
    base = (url or local_url(settings)).rstrip("/")
    secret = token or page_token(settings)
    if not secret:
        print(
            f"no token: pass --token, or start `novaberg serve` once on this machine "
            f"(it keeps one in {settings.home / PAGE_TOKEN_FILE})",
            file=sys.stderr,
        )
        raise typer.Exit(2)
    session = ChatSession(base, secret, character or settings.character, Screen(sys.stdout))
    try:
        asyncio.run(session.run(stdin_lines()))
    except ChatError as exc:
        print(exc, file=sys.stderr)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        print()


def local_url(settings: Settings) -> str:
    host = settings.host
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.port}"


def page_token(settings: Settings) -> str:
    path = settings.home.expanduser() / PAGE_TOKEN_FILE
    with contextlib.suppress(OSError):
        return Path(path).read_text().strip()
    return ""


async def stdin_lines() -> AsyncIterator[str]:
    """Lines typed on standard input (read in a thread: a terminal's stdin cannot be
    awaited portably); ends at end of input."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def read() -> None:
        for line in iter(sys.stdin.readline, ""):
            loop.call_soon_threadsafe(queue.put_nowait, line)
        loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=read, name="stdin", daemon=True).start()
    while (line := await queue.get()) is not None:
        yield line


class Screen:
    """The terminal: wrapped blocks, a stage line that rewrites itself, the prompt.

    On a terminal the last line is either the stage line or the prompt, never both: from a
    sent message until its answer (or failure) the stage line shows what Nova does and the
    prompt waits; afterwards the prompt stays, and stage lines of work she does after the
    answer (storing memories, her own thoughts) are not drawn over it — a stage line there
    would stay on screen with the next typed line glued to it. Every block clears the last
    line first; written to a file or pipe there is neither stage line nor prompt."""

    def __init__(self, out: TextIO, *, live: bool | None = None, width: int | None = None):
        self.out = out
        self.live = out.isatty() if live is None else live
        columns = width or shutil.get_terminal_size((MAX_WIDTH, 24)).columns
        self.width = max(20, min(columns, MAX_WIDTH))
        self.awaiting = False
        self._give_up: asyncio.TimerHandle | None = None

    def _paint(self, text: str, color: str) -> str:
        return f"{color}{text}{RESET}" if self.live else text

    def block(self, who: str, text: str, color: str = BOLD) -> None:
        """`who: text`, wrapped; continuation lines indented by two spaces."""
        head = f"{who}: "
        lines: list[str] = []
        for paragraph in text.splitlines() or [""]:
            lines += textwrap.wrap(
                paragraph,
                width=self.width,
                initial_indent=head if not lines else "  ",
                subsequent_indent="  ",
                break_on_hyphens=False,
            ) or ["  "]
        if lines[0].startswith(head):
            lines[0] = self._paint(head.rstrip(), color) + " " + lines[0][len(head) :]
        else:  # a head wider than the screen: textwrap moved it
            lines.insert(0, self._paint(head.rstrip(), color))
        self._write("\n".join(lines))

    def note(self, text: str, color: str = DIM) -> None:
        wrapped = textwrap.wrap(text, width=self.width, subsequent_indent="  ") or [""]
        self._write("\n".join(self._paint(line, color) for line in wrapped))

    def await_answer(self) -> None:
        """A message went out: stage lines replace the prompt until `answered`. A turn
        that never reports back gives the prompt back after `AWAIT_LIMIT` seconds."""
        self.awaiting = True
        self._cancel_give_up()
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to give up
            self._give_up = asyncio.get_running_loop().call_later(AWAIT_LIMIT, self.answered)

    def answered(self) -> None:
        """The awaited answer (or failure) is shown: the prompt comes back to stay."""
        self.awaiting = False
        self._cancel_give_up()
        self.prompt()

    def stage(self, text: str) -> None:
        """Show what Nova does now, only while the person waits for her answer."""
        if not self.live or not self.awaiting:
            return
        line = f"  … {text}"[: self.width - 1]
        self.out.write(CLEAR_LINE + self._paint(line, DIM))
        self.out.flush()

    def prompt(self) -> None:
        """The prompt on the last line (not while an answer is awaited: the stage has it)."""
        if self.live and not self.awaiting:
            self.out.write(CLEAR_LINE + PROMPT)
            self.out.flush()

    def _cancel_give_up(self) -> None:
        if self._give_up is not None:
            self._give_up.cancel()
            self._give_up = None

    def _write(self, text: str) -> None:
        self.out.write((CLEAR_LINE if self.live else "") + text + "\n")
        self.out.flush()


class ChatSession:
    """One conversation with one character: the socket listener and the input loop."""

    def __init__(self, url: str, token: str, character: str, screen: Screen) -> None:
        self.url = url
        self.token = token
        self.character = character
        self.screen = screen
        self.name = character
        self.client_id = f"cli-{os.getpid()}"
        self.seq: int | None = None
        self.http = httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )

    async def run(self, lines: AsyncIterator[str]) -> None:
        try:
            await self._introduce()
            listener = asyncio.create_task(self._listen(), name="chat-socket")
            typing = asyncio.create_task(self._read(lines), name="chat-input")
            await asyncio.wait({listener, typing}, return_when=asyncio.FIRST_COMPLETED)
            for task in (listener, typing):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if listener.done() and not listener.cancelled() and listener.exception():
                raise listener.exception()  # type: ignore[misc]
        finally:
            await self.http.aclose()

    async def _introduce(self) -> None:
        """Check server, token and character before the first line is typed."""
        try:
            answer = await self.http.get("/v1/models")
        except httpx.HTTPError as exc:
            raise ChatError(
                f"no Novaberg server at {self.url} ({exc}); start one with `novaberg serve`"
            ) from None
        if answer.status_code == 401:
            raise ChatError(f"the server at {self.url} does not know this token")
        if answer.status_code != 200:
            raise ChatError(f"{self.url}/v1/models answered {answer.status_code}")
        names = {m["id"]: m.get("name") or m["id"] for m in answer.json().get("data", [])}
        if self.character not in names:
            known = ", ".join(sorted(names)) or "none"
            raise ChatError(f"unknown character {self.character!r} (known: {known})")
        self.name = str(names[self.character])
        self.screen.note(f"{self.name} · {self.url}", BOLD)
        self.screen.note(HELP.format(name=self.name))

    # -- what the server sends ---------------------------------------------------------------

    def _socket_url(self) -> str:
        base = "ws" + self.url[len("http") :] if self.url.startswith("http") else self.url
        query = f"token={quote(self.token, safe='')}&client_id={self.client_id}"
        if self.seq is not None:
            query += f"&since={self.seq}"
        return f"{base}/ws?{query}"

    async def _listen(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed, InvalidHandshake

        first = True
        while True:
            try:
                async with connect(self._socket_url(), max_size=None) as socket:
                    if not first:
                        self.screen.note("wieder verbunden")
                        self.screen.prompt()
                    first = False
                    async for raw in socket:
                        self.show(json.loads(raw))
                    code = socket.close_code
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd else None
            except (OSError, InvalidHandshake, TimeoutError):
                code = None
            if code == CLOSE_UNAUTHORIZED:
                raise ChatError("the server refused the token")
            self.screen.note("Verbindung getrennt – verbinde neu …")
            await asyncio.sleep(RECONNECT_SECONDS)

    def show(self, message: dict[str, Any]) -> None:
        """Show one server message (those of other characters are not this chat's)."""
        kind = message.get("typ")
        if "seq" in message:
            self.seq = max(self.seq or 0, int(message["seq"]))
        if kind == MSG_HELLO:
            if self.seq is None:
                self.seq = int(message.get("seq_aktuell", 0))
            return
        if message.get("character_id") != self.character:
            return
        if kind == MSG_STAGE:
            self.screen.stage(f"{self.name} {message.get('label', '')}")
            return
        if kind == MSG_RESPONSE:
            self.show_answer(message)
            if message.get(FIELD_ORIGIN) != ORIGIN_OWN_THOUGHT:
                self.screen.answered()
        elif kind == MSG_FAILED:
            self.screen.note(
                f"keine Antwort: {failure_sentence(str(message.get('grund', '')))}", RED
            )
            self.screen.answered()
        elif kind == MSG_UTTERANCE:
            for said in message.get("aeusserungen") or []:
                self.screen.block("du (anderes Gerät)", str(said.get("prompt", "")), DIM)
        else:
            return
        self.screen.prompt()

    def show_answer(self, message: dict[str, Any]) -> None:
        """Nova's answer; a question marked as one (with the answer it waits for) and a
        receipt line per change stored (`erwartet_antwort`, `aenderungen`)."""
        text = str(message.get("nachricht", ""))
        awaited = message.get(FIELD_AWAITING)
        if message.get("reiz_herkunft") == ORIGIN_OWN_THOUGHT:
            self.screen.block(f"{self.name} (eigener Gedanke)", text, MAGENTA)
        elif isinstance(awaited, dict):
            self.screen.block(f"{self.name} (fragt)", text, CYAN)
        else:
            self.screen.block(self.name, text, CYAN)
        for change in message.get(FIELD_CHANGES) or []:
            if isinstance(change, dict) and change.get("text"):
                self.screen.note(f"  ✓ {change['text']}")
        if isinstance(awaited, dict):
            hint = ANSWER_HINTS.get(str(awaited.get("art")))
            if hint:
                self.screen.note(f"  ({hint})")

    # -- what the person types ---------------------------------------------------------------

    async def _read(self, lines: AsyncIterator[str]) -> None:
        self.screen.prompt()
        async for line in lines:
            text = line.strip()
            if text in ("/quit", "/exit"):
                return
            if text:
                await self.handle(text)
            self.screen.prompt()

    async def handle(self, text: str) -> None:
        command, _, rest = text.partition(" ")
        try:
            if command == "/history":
                await self.history()
            elif command == "/memory":
                await self.memory(rest.strip())
            elif command == "/help":
                self.screen.note(HELP.format(name=self.name))
            elif command.startswith("/") and len(command) > 1 and command[1:].isalpha():
                self.screen.note(f"unbekannter Befehl {command}. " + HELP.format(name=self.name))
            else:
                await self.send(text)
        except httpx.HTTPError as exc:
            self.screen.note(f"Server nicht erreichbar: {exc}", RED)

    async def send(self, text: str) -> None:
        self.screen.await_answer()  # before the POST: her answer may beat its reply
        try:
            answer = await self.http.post(
                "/chat",
                json={"character_id": self.character, "text": text, "client_id": self.client_id},
            )
        except httpx.HTTPError:
            self.screen.awaiting = False
            raise
        if answer.status_code != 202:
            self.screen.awaiting = False
            self.screen.note(f"nicht angenommen: {_problem(answer)}", RED)

    async def history(self) -> None:
        answer = await self.http.get(f"/memory/{quote(self.character, safe='')}/session")
        if answer.status_code != 200:
            self.screen.note(f"Verlauf nicht lesbar: {_problem(answer)}", RED)
            return
        data = answer.json()
        turns = [t for t in data.get("turns", []) if str(t.get("inhalt") or "").strip()]
        self.screen.note(f"— Verlauf (die letzten {min(len(turns), HISTORY_TURNS)}) —")
        if data.get("summary"):
            self.screen.block("früher", str(data["summary"]), DIM)
        for turn in turns[-HISTORY_TURNS:]:
            who = "du" if turn.get("rolle") == "user" else self.name
            self.screen.block(who, str(turn.get("inhalt", "")), BOLD if who == "du" else CYAN)
        if not turns:
            self.screen.note("(noch nichts)")

    async def memory(self, query: str) -> None:
        if not query:
            self.screen.note("/memory SUCHE – zum Beispiel: /memory Urlaub")
            return
        hits = await self._search(query)
        if hits is None:
            return
        self.screen.note(f"— {self.name}s Gedächtnis zu „{query}“ —")
        for layer, text in hits:
            self.screen.block(f"[{layer}]", text, DIM)
        if not hits:
            self.screen.note("(nichts gefunden)")

    async def _search(self, query: str) -> list[tuple[str, str]] | None:
        """Hits as (layer, text): the server's memory search where it has one, else the
        short- and long-term entries whose text contains the query."""
        base = f"/memory/{quote(self.character, safe='')}"
        answer = await self.http.get(f"{base}/search", params={"q": query, "limit": 10})
        if answer.status_code == 200:
            hits = answer.json()["hits"]
            return [(_layer(str(h.get("layer", ""))), str(h.get("text", ""))) for h in hits]
        if answer.status_code != 404 or answer.json().get("detail") != "Not Found":
            self.screen.note(f"Suche fehlgeschlagen: {_problem(answer)}", RED)
            return None
        short = await self.http.get(f"{base}/short_term")
        long = await self.http.get(f"{base}/long_term", params={"limit": 500})
        for reply in (short, long):
            if reply.status_code != 200:
                self.screen.note(f"Gedächtnis nicht lesbar: {_problem(reply)}", RED)
                return None
        needle = query.casefold()
        found = [("kurzzeit", str(e.get("inhalt", ""))) for e in short.json()["entries"]]
        found += [("langzeit", str(n.get("inhalt", ""))) for n in long.json()["nodes"]]
        return [(layer, text) for layer, text in found if needle in text.casefold()][:10]


LAYER_NAMES = {"kzg": "kurzzeit", "lzg": "langzeit"}
"""The search's layer ids as a person reads them (the archive's `archiv` reads as is)."""


def _layer(layer: str) -> str:
    return LAYER_NAMES.get(layer, layer)


def _problem(answer: httpx.Response) -> str:
    """An error answer in words: its sentence (`meldung`) where the server gives one, else
    `fehler: detail` (either shape), else the status."""
    try:
        body = answer.json()
    except ValueError:
        return f"HTTP {answer.status_code}"
    detail = body
    if isinstance(body, dict) and "fehler" not in body:  # `{"detail": {...}}`, not /chat's
        detail = body.get("detail", body)
    if isinstance(detail, dict) and isinstance(detail.get(FIELD_SENTENCE), str):
        return str(detail[FIELD_SENTENCE])
    if isinstance(detail, dict) and "fehler" in detail:
        return f"{detail['fehler']}: {detail.get('detail', '')}"
    return f"HTTP {answer.status_code}: {detail}"
