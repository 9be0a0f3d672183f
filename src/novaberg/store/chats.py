"""A pair's chats: threads of the conversation the person opened with one character
(docs/behaviour/web.md#chats).

A chat owns no messages of its own. The pair's history stays the `pipeline_log` rows the
dispatcher and the failed-turn log write (store/conversation_history.py); a chat is the set
of *spans* of time in which it was open (`chat_abschnitte`), and holds the turns that began
then — a message belongs to the chat that was open when it arrived, however late its
answer is written. So the turn machinery needs no chat of its own; the queues stay per
pair. The pair's first chat reaches back without limit and holds what was said before
chats existed. A deleted chat keeps its spans (its turns must not fall into the chat
before it); it is only hidden.

Every change runs in one transaction under a per-pair advisory lock, so two tabs creating
or opening chats at once never leave two "first" chats or a span of a deleted chat open.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store.conversation_history import RowRange, range_clause, row_time
from novaberg.store.pipeline_log import KIND_FAILED_TURN, KIND_RAW_TURN
from novaberg.wire import ORIGIN_OWN_THOUGHT

TITLE_WORDS: Final = 6
TITLE_CHARS: Final = 48
"""A chat without a name of its own is called by the first words of its first message:
at most this many words and characters, so the list stays one line per chat."""

TITLE_MAX: Final = 120
"""The longest name a person may give a chat."""

MAX_CHATS: Final = 200
"""Chats listed per pair (newest first): more than a person scrolls through in a select."""

_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 7120304512))"
_HISTORY_ROWS = (
    f"art IN ('{KIND_RAW_TURN}', '{KIND_FAILED_TURN}') AND user_id = %s AND character_id = %s"
)


@dataclass(frozen=True, slots=True)
class Chat:
    """One chat of a pair; `title` is the person's own name for it (None: not named)."""

    id: str
    pair: Pair
    title: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ChatSummary:
    """A chat as the list shows it: its name (own or from its first message), how many turns
    it holds and when the last one was written."""

    chat: Chat
    title: str
    turns: int
    last_at: datetime | None
    current: bool


@dataclass(frozen=True, slots=True)
class Span:
    """The chat was opened at `opened_at` (None: the pair's first span, without a start)."""

    chat_id: str
    opened_at: datetime | None


def new_chat_id() -> str:
    return "chat-" + os.urandom(8).hex()


def title_from(text: str) -> str:
    """The first words of a message as a chat's name ("" for none)."""
    words = re.sub(r"\s+", " ", text).strip().split(" ")
    title = " ".join(words[:TITLE_WORDS])
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip()
    return title + ("…" if title != " ".join(words) else "") if title else ""


def ranges_of(spans: Sequence[Span], chat_id: str) -> list[RowRange]:
    """The times `[from, to)` in which `chat_id` was open, from the pair's spans (oldest
    first; None: unbounded)."""
    return [
        (span.opened_at, spans[index + 1].opened_at if index + 1 < len(spans) else None)
        for index, span in enumerate(spans)
        if span.chat_id == chat_id
    ]


def _chat(row: Any) -> Chat:
    return Chat(
        id=row["id"],
        pair=Pair(row["user_id"], row["character_id"]),
        title=row["titel"],
        created_at=row["erstellt_am"],
    )


async def _lock(conn: AsyncConnection[Any], pair: Pair) -> None:
    await conn.execute(_LOCK, (str(pair),))


async def _spans(conn: AsyncConnection[Any], pair: Pair) -> list[Span]:
    cur = await conn.execute(
        "SELECT chat_id, CASE WHEN ab = '-infinity' THEN NULL ELSE ab END AS ab"
        " FROM chat_abschnitte WHERE user_id = %s AND character_id = %s ORDER BY chat_abschnitte.ab",
        (pair.user_id, pair.character_id),
    )
    rows: list[Any] = await cur.fetchall()
    return [Span(row["chat_id"], row["ab"]) for row in rows]


async def _insert(conn: AsyncConnection[Any], pair: Pair, title: str | None) -> Chat:
    cur = await conn.execute(
        "INSERT INTO chats (id, user_id, character_id, titel) VALUES (%s, %s, %s, %s)"
        " RETURNING id, user_id, character_id, titel, erstellt_am",
        (new_chat_id(), pair.user_id, pair.character_id, title),
    )
    row = await cur.fetchone()
    assert row is not None
    return _chat(row)


async def _open(conn: AsyncConnection[Any], pair: Pair, chat_id: str, at: datetime | None) -> None:
    """Start a span of `chat_id` at `at` (None: the first span, reaching back). The time is
    this process's clock, the clock `POST /chat` stamps a message's arrival with."""
    await conn.execute(
        "INSERT INTO chat_abschnitte (user_id, character_id, ab, chat_id) VALUES (%s, %s, %s, %s)",
        (pair.user_id, pair.character_id, "-infinity" if at is None else at, chat_id),
    )


def _now() -> datetime:
    return datetime.now(UTC)


async def _ensure_first(conn: AsyncConnection[Any], pair: Pair) -> list[Span]:
    """The pair's spans; a pair without any gets its first chat, from row 0 (the history
    written before chats existed). Call under the pair's lock."""
    spans = await _spans(conn, pair)
    if spans:
        return spans
    chat = await _insert(conn, pair, None)
    await _open(conn, pair, chat.id, None)
    return [Span(chat.id, None)]


async def spans(pool: AsyncConnectionPool, pair: Pair) -> list[Span]:
    """The pair's spans by row id, the first chat made if there is none yet."""
    async with pool.connection() as conn, conn.transaction():
        await _lock(conn, pair)
        return await _ensure_first(conn, pair)


async def read_spans(pool: AsyncConnectionPool, pair: Pair) -> list[Span]:
    """The pair's spans by row id, as they are (none for a pair that never listed chats)."""
    async with pool.connection() as conn:
        return await _spans(conn, pair)


def open_ranges(spans: Sequence[Span]) -> list[RowRange]:
    """The open chat's spans; a pair without chats yet: its whole history."""
    return ranges_of(spans, current_of(spans)) if spans else [(None, None)]


def current_of(spans: Sequence[Span]) -> str:
    """The open chat: the one of the newest span."""
    return spans[-1].chat_id


async def _own(conn: AsyncConnection[Any], user_id: str, chat_id: str) -> Chat | None:
    cur = await conn.execute(
        "SELECT id, user_id, character_id, titel, erstellt_am FROM chats"
        " WHERE id = %s AND user_id = %s AND geloescht_am IS NULL",
        (chat_id, user_id),
    )
    row = await cur.fetchone()
    return _chat(row) if row else None


async def find(pool: AsyncConnectionPool, user_id: str, chat_id: str) -> Chat | None:
    """`user_id`'s chat of this id; None when it is someone else's, deleted or unknown."""
    async with pool.connection() as conn:
        return await _own(conn, user_id, chat_id)


async def _summary(
    conn: AsyncConnection[Any], chat: Chat, ranges: Sequence[RowRange], current: bool
) -> ChatSummary:
    where, bounds = range_clause(ranges)
    params = [chat.pair.user_id, chat.pair.character_id, *bounds]
    cur = await conn.execute(
        f"SELECT count(*) AS n, max(erstellt_am) AS zuletzt FROM pipeline_log"
        f" WHERE {_HISTORY_ROWS} AND {where}",
        params,
    )
    counted = await cur.fetchone()
    title = chat.title
    if not title:
        cur = await conn.execute(
            f"SELECT inhalt->>'user_prompt' AS text FROM pipeline_log WHERE {_HISTORY_ROWS}"
            f" AND {where} AND coalesce(inhalt->>'herkunft', '') <> %s ORDER BY id LIMIT 1",
            [*params, ORIGIN_OWN_THOUGHT],
        )
        first = await cur.fetchone()
        title = title_from(str(first["text"] or "")) if first else ""
    return ChatSummary(
        chat=chat,
        title=title,
        turns=int(counted["n"]) if counted else 0,
        last_at=counted["zuletzt"] if counted else None,
        current=current,
    )


_PER_CHAT = f"""
SELECT s.chat_id, count(*) AS n, max(p.erstellt_am) AS zuletzt,
       min(p.id) FILTER (WHERE coalesce(p.inhalt->>'herkunft', '') <> %(thought)s) AS erste_id
FROM pipeline_log p
CROSS JOIN LATERAL (
    SELECT a.chat_id FROM chat_abschnitte a
    WHERE a.user_id = p.user_id AND a.character_id = p.character_id
      AND a.ab <= {row_time("p")}
    ORDER BY a.ab DESC LIMIT 1
) s
WHERE p.art IN ('{KIND_RAW_TURN}', '{KIND_FAILED_TURN}')
  AND p.user_id = %(user)s AND p.character_id = %(character)s
GROUP BY s.chat_id
"""
"""Every chat's count, last time and first message row in one pass over the pair's history
(a range filter per chat would read the history once per chat)."""


async def list_chats(pool: AsyncConnectionPool, pair: Pair) -> list[ChatSummary]:
    """The pair's chats, newest first, the open one marked; a pair without chats gets its
    first one here (it holds the history so far)."""
    async with pool.connection() as conn:
        async with conn.transaction():
            await _lock(conn, pair)
            pair_spans = await _ensure_first(conn, pair)
        cur = await conn.execute(
            "SELECT id, user_id, character_id, titel, erstellt_am FROM chats"
            " WHERE user_id = %s AND character_id = %s AND geloescht_am IS NULL"
            " ORDER BY erstellt_am DESC, id DESC LIMIT %s",
            (pair.user_id, pair.character_id, MAX_CHATS),
        )
        chats = [_chat(row) for row in await cur.fetchall()]
        cur = await conn.execute(
            _PER_CHAT,
            {"thought": ORIGIN_OWN_THOUGHT, "user": pair.user_id, "character": pair.character_id},
        )
        rows: list[Any] = await cur.fetchall()
        counted: dict[str, Any] = {row["chat_id"]: row for row in rows}
        firsts = [int(row["erste_id"]) for row in counted.values() if row["erste_id"]]
        texts: dict[int, str] = {}
        if firsts:
            cur = await conn.execute(
                "SELECT id, inhalt->>'user_prompt' AS text FROM pipeline_log WHERE id = ANY(%s)",
                (firsts,),
            )
            found: list[Any] = await cur.fetchall()
            texts = {int(row["id"]): str(row["text"] or "") for row in found}
        current = current_of(pair_spans)
        summaries = []
        for chat in chats:
            row = counted.get(chat.id)
            first = texts.get(int(row["erste_id"])) if row and row["erste_id"] else None
            summaries.append(
                ChatSummary(
                    chat=chat,
                    title=chat.title or title_from(first or ""),
                    turns=int(row["n"]) if row else 0,
                    last_at=row["zuletzt"] if row else None,
                    current=chat.id == current,
                )
            )
        return summaries


async def summary(pool: AsyncConnectionPool, chat: Chat) -> ChatSummary:
    """One chat as the list shows it."""
    async with pool.connection() as conn:
        pair_spans = await _spans(conn, chat.pair)
        current = bool(pair_spans) and current_of(pair_spans) == chat.id
        return await _summary(conn, chat, ranges_of(pair_spans, chat.id), current)


async def create(pool: AsyncConnectionPool, pair: Pair, title: str | None = None) -> Chat:
    """A new, empty chat of the pair, opened: the pair's next turns go there."""
    async with pool.connection() as conn, conn.transaction():
        await _lock(conn, pair)
        await _ensure_first(conn, pair)
        chat = await _insert(conn, pair, title)
        await _open(conn, pair, chat.id, _now())
        return chat


async def open_chat(pool: AsyncConnectionPool, chat: Chat) -> bool:
    """Make `chat` the pair's open one; False when it already was (nothing changed)."""
    async with pool.connection() as conn, conn.transaction():
        await _lock(conn, chat.pair)
        pair_spans = await _ensure_first(conn, chat.pair)
        if (
            current_of(pair_spans) == chat.id
            or await _own(conn, chat.pair.user_id, chat.id) is None
        ):
            return False
        await _open(conn, chat.pair, chat.id, _now())
        return True


async def rename(pool: AsyncConnectionPool, chat: Chat, title: str | None) -> Chat:
    """Give the chat the person's name for it (None or "": back to its first words)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "UPDATE chats SET titel = %s WHERE id = %s AND geloescht_am IS NULL"
            " RETURNING id, user_id, character_id, titel, erstellt_am",
            (title or None, chat.id),
        )
        row = await cur.fetchone()
        return _chat(row) if row else chat


async def delete(pool: AsyncConnectionPool, chat: Chat) -> bool:
    """Hide the chat and its turns from the list; True when it was the open one, which
    then passes to the newest other chat (a new empty one when none is left)."""
    async with pool.connection() as conn, conn.transaction():
        await _lock(conn, chat.pair)
        pair_spans = await _ensure_first(conn, chat.pair)
        await conn.execute("UPDATE chats SET geloescht_am = now() WHERE id = %s", (chat.id,))
        if current_of(pair_spans) != chat.id:
            return False
        cur = await conn.execute(
            "SELECT id FROM chats WHERE user_id = %s AND character_id = %s"
            " AND geloescht_am IS NULL ORDER BY erstellt_am DESC, id DESC LIMIT 1",
            (chat.pair.user_id, chat.pair.character_id),
        )
        row: Any = await cur.fetchone()
        successor = row["id"] if row else (await _insert(conn, chat.pair, None)).id
        await _open(conn, chat.pair, successor, _now())
        return True
