"""Reading chat exports into turns: SillyTavern chat JSONL, ChatGPT `conversations.json`, and
a plain JSONL of {"id", "speaker": "user"|"character", "text", "time"} (optionally "name").

The whole file is read and checked before anything is stored. A file that is not one of the
formats (not UTF-8, broken JSON, a JSON of another shape, no usable turn) raises
`ChatFormatError` with one line saying why; one over a limit (imports/limits.py: its size,
its lines — counted before any line is parsed — or a JSON export's messages) raises
`TooLarge`, a JSON export nested too deep `TooDeep` (bounded_json.py). Inside a recognised
JSONL file, a malformed line (a deep one included) is a `Problem` (its line number and
reason) and is skipped; the first `PROBLEMS_LISTED` are kept, the rest only counted. System
and empty messages are not turns and are only counted. Each turn keeps the source's own id
— the plain format's `id`, ChatGPT's message id, for SillyTavern (whose messages have none)
a hash of the message's time, author and text — so importing the same export again finds it
stored. Parsing is CPU work in proportion to the file: callers run it off the event loop.

Formats as their exporters write them (docs/behaviour/memory.md#imports):
- SillyTavern: line 1 a header (`user_name`, `character_name`, `create_date`), then one
  message per line (`name`, `is_user`, `is_system`, `send_date`, `mes`).
- ChatGPT: a JSON array of conversations, each a tree of messages (`mapping`, nodes with
  `parent` and `message` {`id`, `author.role`, `create_time`, `content.parts`}); the branch
  ending at `current_node` is the conversation as last seen.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

from novaberg import bounded_json
from novaberg.imports.limits import DEFAULT_LIMITS, ImportLimits, TooLarge, over_limit
from novaberg.store.archive import SPEAKER_CHARACTER, SPEAKER_USER

FORMAT_JSONL: Final = "jsonl"
FORMAT_SILLYTAVERN: Final = "sillytavern"
FORMAT_CHATGPT: Final = "chatgpt"
"""Format names; also the archive's `quelle` of the turns imported from them."""
FORMATS: Final = (FORMAT_JSONL, FORMAT_SILLYTAVERN, FORMAT_CHATGPT)

SILLYTAVERN_TIME_FORMATS: Final = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p", "%Y-%m-%d@%Hh%Mm%Ss")
"""SillyTavern's `send_date` ("June 20, 2024 3:45pm") and `create_date` layouts; newer
versions write ISO 8601 or epoch milliseconds, which are read as well."""

MAX_TEXT_CHARS: Final = 100_000
"""A turn longer than this is a malformed line (no chat message is that long)."""

SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
"""A `\\uD800`-`\\uDFFF` escape: only then can parsed JSON hold a lone surrogate, which is
no text PostgreSQL can store."""

PROBLEMS_LISTED: Final = 100
"""Skipped lines named one by one in a report; beyond them only the count grows (a file of
junk must not become a report of junk)."""


class ChatFormatError(ValueError):
    """The file as a whole is not an importable chat (one line: what is wrong)."""


@dataclass(frozen=True, slots=True)
class ImportedTurn:
    source_id: str
    speaker: str
    text: str
    time: datetime
    conversation: str
    line: int | None = None
    name: str | None = None
    """The speaker's name where the export gives one (SillyTavern's `name`, a plain line's
    optional `name`): kept in the archive and searchable ("What did Lena say …")."""


@dataclass(frozen=True, slots=True)
class Problem:
    """A part of the file that was skipped: its line (JSONL) or place (JSON) and why."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass
class ParsedChat:
    format: str
    turns: list[ImportedTurn] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    """The first `PROBLEMS_LISTED` skipped places, in file order."""
    problem_count: int = 0
    """Every skipped place, listed or not."""
    ignored: int = 0
    """System and empty messages: not turns, not errors."""

    def skip(self, problem: Problem) -> None:
        self.problem_count += 1
        if len(self.problems) < PROBLEMS_LISTED:
            self.problems.append(problem)


class _LineError(ValueError):
    """A malformed line (the reason is the message)."""


def parse_chat(
    data: bytes, *, tz: ZoneInfo, name: str = "", limits: ImportLimits = DEFAULT_LIMITS
) -> ParsedChat:
    """The turns of a chat export, or `ChatFormatError`/`TooLarge`/`TooDeep`. `tz`: the zone
    of times given without one; `name`: the file's name (the conversation id of a plain
    JSONL)."""
    limits.check_import_size(len(data))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ChatFormatError(f"not UTF-8 text (byte {exc.start})") from None
    stripped = text.strip()
    if not stripped:
        raise ChatFormatError("the file is empty")
    if stripped[0] == "[":
        suspect = bool(SURROGATE_ESCAPE.search(stripped))
        return _chatgpt(_load_json(stripped), tz, limits, suspect)
    if stripped[0] == "{":
        lines = stripped.count("\n") + 1
        if lines > limits.import_lines:
            raise TooLarge(
                over_limit(
                    "the chat export", lines, limits.import_lines, "max_import_lines", "lines"
                )
            )
        try:
            whole = bounded_json.loads(stripped)
        except ValueError:  # several lines (JSONL), or one too deep: each line is judged
            whole = None
        if isinstance(whole, Mapping) and "mapping" in whole:
            return _chatgpt([whole], tz, limits, bool(SURROGATE_ESCAPE.search(stripped)))
        return _jsonl(text, tz, name)
    raise ChatFormatError(
        "not a chat export: expected JSONL (SillyTavern or plain) or ChatGPT's conversations.json"
    )


def _load_json(text: str) -> Any:
    try:
        return bounded_json.loads(text)  # TooDeep passes up: refused as deep, not broken
    except json.JSONDecodeError as exc:
        raise ChatFormatError(f"broken JSON at line {exc.lineno}: {exc.msg}") from None


# --- JSONL (plain and SillyTavern) ----------------------------------------------------------


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Numbered non-blank lines, split at \\n only (as counted; JSON strings may hold
    U+2028 and friends, which `str.splitlines` would split at)."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line


def _jsonl_format(objects: list[tuple[int, Any]]) -> str:
    for _, obj in objects:
        if not isinstance(obj, Mapping):
            continue
        if ("user_name" in obj and "character_name" in obj) or ("mes" in obj and "is_user" in obj):
            return FORMAT_SILLYTAVERN
        if "speaker" in obj and "text" in obj:
            return FORMAT_JSONL
    raise ChatFormatError(
        "no line looks like a chat turn: expected SillyTavern messages ({name, is_user, mes, "
        'send_date}) or {"id", "speaker", "text", "time"}'
    )


def _jsonl(text: str, tz: ZoneInfo, name: str) -> ParsedChat:
    objects: list[tuple[int, Any]] = []
    broken = ParsedChat(FORMAT_JSONL)
    for number, line in _lines(text):
        try:
            objects.append((number, bounded_json.loads(line)))
        except bounded_json.TooDeep:
            broken.skip(Problem(f"line {number}", f"nested deeper than {bounded_json.MAX_DEPTH}"))
        except json.JSONDecodeError as exc:
            broken.skip(Problem(f"line {number}", f"broken JSON ({exc.msg})"))
            continue
        if SURROGATE_ESCAPE.search(line) and not _utf8(objects[-1][1]):
            objects.pop()
            broken.skip(Problem(f"line {number}", "a string holds a lone surrogate (not UTF-8)"))
    if not objects:
        first = broken.problems[0].reason if broken.problems else "no content"
        raise ChatFormatError(f"broken JSON: no line is a JSON object (line 1: {first})")
    kind = _jsonl_format(objects)
    parsed = (
        _sillytavern(objects, tz, name) if kind == FORMAT_SILLYTAVERN else _plain(objects, tz, name)
    )
    # both lists are in line order, each the first of its kind: their merge's first
    # PROBLEMS_LISTED are the file's
    merged = sorted([*broken.problems, *parsed.problems], key=_line_order)
    parsed.problems = merged[:PROBLEMS_LISTED]
    parsed.problem_count += broken.problem_count
    if not parsed.turns:
        raise ChatFormatError(f"no importable turn in the file ({_first_problem(parsed)})")
    return parsed


def _utf8(value: Any) -> bool:
    """Every string in the (depth-checked) value is UTF-8 text."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _line_order(problem: Problem) -> int:
    digits = "".join(ch for ch in problem.where if ch.isdigit())
    return int(digits) if digits else 0


def _first_problem(parsed: ParsedChat) -> str:
    return str(parsed.problems[0]) if parsed.problems else "every message is empty or a system note"


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise _LineError("text is not a string")
    if len(value) > MAX_TEXT_CHARS:
        raise _LineError(f"text longer than {MAX_TEXT_CHARS} characters")
    if "\x00" in value:
        raise _LineError("text contains NUL")
    return value.strip()


def parse_time(value: Any, tz: ZoneInfo) -> datetime:
    """An ISO 8601 string or epoch seconds/milliseconds as an aware datetime (zone-less
    strings are read in `tz`)."""
    if isinstance(value, bool):
        raise _LineError("time is not a time")
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 100_000_000_000 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            raise _LineError(f"time {value!r} is out of range") from None
    if isinstance(value, str) and value.strip():
        raw = value.strip()
        if raw.isascii() and raw.replace(".", "", 1).isdigit():  # "²" is no number to float()
            return parse_time(float(raw), tz)
        try:
            moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            moment = _named_time(raw)
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=tz)
    raise _LineError("time missing")


def _named_time(raw: str) -> datetime:
    for layout in SILLYTAVERN_TIME_FORMATS:
        try:
            return datetime.strptime(raw, layout)
        except ValueError:
            continue
    raise _LineError(f"time {raw!r} is not ISO 8601, epoch or SillyTavern's format")


def _plain(objects: list[tuple[int, Any]], tz: ZoneInfo, name: str) -> ParsedChat:
    parsed = ParsedChat(FORMAT_JSONL)
    seen: set[str] = set()
    for number, obj in objects:
        try:
            turn = _plain_turn(obj, tz, name or FORMAT_JSONL, number)
        except _LineError as exc:
            parsed.skip(Problem(f"line {number}", str(exc)))
            continue
        if turn is None:
            parsed.ignored += 1
        elif turn.source_id in seen:
            parsed.skip(Problem(f"line {number}", f"id {turn.source_id!r} repeated"))
        else:
            seen.add(turn.source_id)
            parsed.turns.append(turn)
    return parsed


def _plain_turn(obj: Any, tz: ZoneInfo, conversation: str, number: int) -> ImportedTurn | None:
    if not isinstance(obj, Mapping):
        raise _LineError("not a JSON object")
    ident = obj.get("id")
    if isinstance(ident, bool) or not isinstance(ident, str | int) or not str(ident).strip():
        raise _LineError("id missing")
    speaker = obj.get("speaker")
    if speaker not in (SPEAKER_USER, SPEAKER_CHARACTER):
        raise _LineError(f"speaker must be 'user' or 'character', not {speaker!r}")
    text = _text(obj.get("text"))
    time = parse_time(obj.get("time"), tz)
    if not text:
        return None
    return ImportedTurn(
        str(ident).strip(), str(speaker), text, time, conversation, number, _name(obj)
    )


def _name(obj: Mapping[str, Any]) -> str | None:
    """A line's speaker name: a non-empty string, else None (a number is no name)."""
    value = obj.get("name")
    return value.strip() or None if isinstance(value, str) else None


def _sillytavern(objects: list[tuple[int, Any]], tz: ZoneInfo, name: str) -> ParsedChat:
    parsed = ParsedChat(FORMAT_SILLYTAVERN)
    conversation = name or FORMAT_SILLYTAVERN
    last_time: datetime | None = None
    counts: dict[str, int] = {}
    for number, obj in objects:
        if isinstance(obj, Mapping) and "user_name" in obj and "mes" not in obj:
            conversation = str(obj.get("create_date") or conversation)
            with contextlib.suppress(_LineError):  # a header without a date: times come later
                last_time = parse_time(obj.get("create_date"), tz)
            continue
        try:
            turn = _st_turn(obj, tz, conversation, number, last_time)
        except _LineError as exc:
            parsed.skip(Problem(f"line {number}", str(exc)))
            continue
        if turn is None:
            parsed.ignored += 1
            continue
        occurrence = counts.get(turn.source_id, 0)
        counts[turn.source_id] = occurrence + 1
        if occurrence:  # the same message twice in one chat: both are turns
            turn = ImportedTurn(
                f"{turn.source_id}#{occurrence}",
                turn.speaker,
                turn.text,
                turn.time,
                turn.conversation,
                turn.line,
                turn.name,
            )
        last_time = turn.time
        parsed.turns.append(turn)
    return parsed


def _st_turn(
    obj: Any, tz: ZoneInfo, conversation: str, number: int, last_time: datetime | None
) -> ImportedTurn | None:
    if not isinstance(obj, Mapping):
        raise _LineError("not a JSON object")
    if "mes" not in obj:
        raise _LineError("no message text (mes)")
    if obj.get("is_system"):
        return None
    text = _text(obj.get("mes"))
    if not text:
        return None
    raw_time = obj.get("send_date")
    try:
        time = parse_time(raw_time, tz)
    except _LineError:
        if last_time is None:
            raise
        time = last_time  # a message without a date follows the one before it
    speaker = SPEAKER_USER if obj.get("is_user") else SPEAKER_CHARACTER
    digest = hashlib.sha1(
        f"{raw_time}\x1f{obj.get('name')}\x1f{obj.get('is_user')}\x1f{text}".encode()
    ).hexdigest()[:20]
    return ImportedTurn(f"st-{digest}", speaker, text, time, conversation, number, _name(obj))


# --- ChatGPT ---------------------------------------------------------------------------------


def _chatgpt(data: Any, tz: ZoneInfo, limits: ImportLimits, suspect: bool) -> ParsedChat:
    """`suspect`: the file has a surrogate escape, so each conversation is checked for one
    that is no text."""
    if not isinstance(data, list) or not all(
        isinstance(c, Mapping) and isinstance(c.get("mapping"), Mapping) for c in data
    ):
        raise ChatFormatError(
            "a JSON file, but not ChatGPT's conversations.json (an array of conversations "
            "with a message `mapping`)"
        )
    messages = sum(len(conversation["mapping"]) for conversation in data)
    if messages > limits.import_lines:
        raise TooLarge(
            over_limit(
                "the chat export", messages, limits.import_lines, "max_import_lines", "messages"
            )
        )
    parsed = ParsedChat(FORMAT_CHATGPT)
    seen: set[str] = set()
    for index, conversation in enumerate(data, start=1):
        if suspect and not _utf8(conversation):
            parsed.skip(Problem(f"conversation {index}", "a string holds a lone surrogate"))
            continue
        conv_id = str(conversation.get("conversation_id") or conversation.get("id") or index)
        for node_id, message in _branch(conversation):
            where = f"conversation {index} message {node_id}"
            try:
                turn = _chatgpt_turn(message, node_id, conv_id, conversation, tz)
            except _LineError as exc:
                parsed.skip(Problem(where, str(exc)))
                continue
            if turn is None:
                parsed.ignored += 1
            elif turn.source_id in seen:
                parsed.skip(Problem(where, "message id repeated"))
            else:
                seen.add(turn.source_id)
                parsed.turns.append(turn)
    if not parsed.turns:
        raise ChatFormatError(f"no importable turn in the file ({_first_problem(parsed)})")
    return parsed


def _branch(conversation: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(node id, message) from the root to `current_node`; without one, every message by
    time (a tree whose end is unknown)."""
    mapping: Mapping[str, Any] = conversation["mapping"]
    current = conversation.get("current_node")
    if isinstance(current, str) and current in mapping:
        path: list[tuple[str, Any]] = []
        seen: set[str] = set()
        node_id: Any = current
        while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
            seen.add(node_id)
            node = mapping[node_id]
            if not isinstance(node, Mapping):
                break
            if node.get("message") is not None:
                path.append((node_id, node["message"]))
            node_id = node.get("parent")
        return list(reversed(path))
    messages = [
        (str(node_id), node["message"])
        for node_id, node in mapping.items()
        if isinstance(node, Mapping) and isinstance(node.get("message"), Mapping)
    ]
    return sorted(messages, key=lambda item: _number(item[1].get("create_time")) or 0.0)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _chatgpt_turn(
    message: Any, node_id: str, conversation: str, conv: Mapping[str, Any], tz: ZoneInfo
) -> ImportedTurn | None:
    if not isinstance(message, Mapping):
        raise _LineError("message is not an object")
    author = message.get("author")
    role = author.get("role") if isinstance(author, Mapping) else None
    if role not in ("user", "assistant"):
        return None  # system prompts and tool output are not turns
    content = message.get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    if parts is None and isinstance(content, Mapping) and isinstance(content.get("text"), str):
        parts = [content["text"]]
    if not isinstance(parts, list):
        raise _LineError("no content parts")
    text = _text("\n".join(part for part in parts if isinstance(part, str)))
    if not text:
        return None
    moment = message.get("create_time") or conv.get("create_time")
    try:
        time = parse_time(moment, tz)
    except _LineError:
        raise _LineError("no create_time") from None
    ident = message.get("id") or node_id
    speaker = SPEAKER_USER if role == "user" else SPEAKER_CHARACTER
    return ImportedTurn(str(ident), speaker, text, time, conversation)
