"""One chat written out for the person to keep: Markdown to read, JSON for programs
(docs/behaviour/web.md#exporting-a-chat, which documents the JSON's fields and version).

Both are built from the same history entries the page shows (api/page_api.py's
`HistoryEntry`), so an export holds exactly what the chat list shows: the person's messages,
the character's answers, her own thoughts marked as such, and failed turns with their
reason. Pure functions: the route reads, this writes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from novaberg.api.page_api import HistoryEntry
from novaberg.wire import ORIGIN_OWN_THOUGHT

EXPORT_FORMAT: Final = "novaberg-chat"
EXPORT_VERSION: Final = 1
"""Raised when a field changes meaning or goes; a new optional field keeps the version."""

ROLE_USER: Final = "user"
ROLE_CHARACTER: Final = "assistant"

Language = Literal["de", "en"]

_WORDS: Final[dict[str, dict[str, str]]] = {
    "de": {
        "exported": "exportiert am",
        "thought": "eigener Gedanke",
        "failed": "keine Antwort",
        "untitled": "Chat",
    },
    "en": {
        "exported": "exported on",
        "thought": "own thought",
        "failed": "no answer",
        "untitled": "Chat",
    },
}
"""The few words a Markdown export needs, in the page's language (`sprache`)."""


@dataclass(frozen=True, slots=True)
class ExportHeader:
    chat_id: str
    title: str
    character_id: str
    character_name: str
    user_id: str
    created_at: datetime
    exported_at: datetime


@dataclass(frozen=True, slots=True)
class ExportMessage:
    role: str
    text: str
    at: datetime
    turn_id: str | None
    origin: str
    failed: bool = False
    reason: str | None = None
    emotion: str | None = None


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def messages(entries: Sequence[HistoryEntry]) -> list[ExportMessage]:
    """The chat as a list of messages, oldest first: each turn's words of the person (one
    per text a failed turn held), then the character's answer. An own thought's stimulus
    was never said by the person, so only her answer is kept."""
    out: list[ExportMessage] = []
    for entry in entries:
        at = datetime.fromtimestamp(entry.zeit, UTC)
        if entry.gescheitert:
            for text in entry.eingaben or [entry.eingabe]:
                out.append(
                    ExportMessage(
                        role=ROLE_USER,
                        text=text,
                        at=at,
                        turn_id=entry.turn_id,
                        origin=entry.reiz_herkunft,
                        failed=True,
                        reason=entry.grund,
                    )
                )
            continue
        if entry.eingabe and entry.reiz_herkunft != ORIGIN_OWN_THOUGHT:
            out.append(
                ExportMessage(
                    role=ROLE_USER,
                    text=entry.eingabe,
                    at=at,
                    turn_id=entry.turn_id,
                    origin=entry.reiz_herkunft,
                    emotion=entry.user_emotion,
                )
            )
        if entry.nachricht:
            out.append(
                ExportMessage(
                    role=ROLE_CHARACTER,
                    text=entry.nachricht,
                    at=at,
                    turn_id=entry.turn_id,
                    origin=entry.reiz_herkunft,
                    emotion=entry.emotion,
                )
            )
    return out


def as_json(header: ExportHeader, items: Sequence[ExportMessage]) -> str:
    """The versioned JSON document (fields in docs/behaviour/web.md#exporting-a-chat)."""
    document: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exportiert_am": _iso(header.exported_at),
        "chat": {
            "id": header.chat_id,
            "titel": header.title,
            "character_id": header.character_id,
            "character_name": header.character_name,
            "user_id": header.user_id,
            "erstellt_am": _iso(header.created_at),
        },
        "nachrichten": [
            {
                "rolle": item.role,
                "name": header.user_id if item.role == ROLE_USER else header.character_name,
                "text": item.text,
                "zeit": _iso(item.at),
                "turn_id": item.turn_id,
                "herkunft": item.origin,
                "gescheitert": item.failed,
                "grund": item.reason,
                "emotion": item.emotion,
            }
            for item in items
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def as_markdown(header: ExportHeader, items: Sequence[ExportMessage], language: Language) -> str:
    """A document to read: the title, who talked, then each message under its speaker and
    time. The texts stay as written (an answer's own Markdown renders as such)."""
    words = _WORDS[language]
    lines = [
        f"# {header.title or words['untitled']}",
        "",
        f"{header.character_name} · {header.user_id} · {words['exported']} "
        f"{_stamp(header.exported_at)}",
        "",
    ]
    for item in items:
        name = header.user_id if item.role == ROLE_USER else header.character_name
        notes = []
        if item.origin == ORIGIN_OWN_THOUGHT and item.role == ROLE_CHARACTER:
            notes.append(words["thought"])
        if item.failed:
            notes.append(f"{words['failed']}: {item.reason}" if item.reason else words["failed"])
        note = f" ({'; '.join(notes)})" if notes else ""
        lines += ["---", "", f"**{name}** · {_stamp(item.at)}{note}", "", item.text.strip(), ""]
    return "\n".join(lines)
