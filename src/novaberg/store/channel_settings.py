"""What each of a person's channel kinds gets (`kanal_einstellungen`): answers, impulses,
reminders (docs/behaviour/reach.md#settings). Per person and kind, the same for every
character; a missing row means everything. The page always gets everything (it is the
record); a chat always gets the answers to what was written in it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from psycopg_pool import AsyncConnectionPool

from novaberg.store.channel_links import PUSH, TELEGRAM

KINDS: Final = (TELEGRAM, PUSH)
"""Channel kinds a person can set."""

ANSWERS: Final = "antworten"
IMPULSES: Final = "impulse"
REMINDERS: Final = "erinnerungen"
CATEGORIES: Final = (ANSWERS, IMPULSES, REMINDERS)
"""What an outcome is, for the settings: an answer (or failure) of a turn the person
started, one of Nova's own thoughts (impulse, follow-up), a reminder."""


def everything() -> dict[str, bool]:
    return dict.fromkeys(CATEGORIES, True)


async def read(pool: AsyncConnectionPool, user_id: str) -> dict[str, dict[str, bool]]:
    """kind → category → on, for every kind (defaults filled in)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT art, antworten, impulse, erinnerungen FROM kanal_einstellungen"
            " WHERE user_id = %s",
            (user_id,),
        )
        rows = cast(list[dict[str, Any]], await cur.fetchall())
    found = {str(r["art"]): {c: bool(r[c]) for c in CATEGORIES} for r in rows}
    return {kind: found.get(kind, everything()) for kind in KINDS}


async def update(
    pool: AsyncConnectionPool, user_id: str, changes: Mapping[str, Mapping[str, bool]]
) -> None:
    """Store the given categories per kind; the others keep theirs. Everything is checked
    before anything is written, so a request with one unknown name changes nothing."""
    unknown = {
        name
        for kind, categories in changes.items()
        for name in (set(categories) - set(CATEGORIES)) | ({kind} - set(KINDS))
    }
    if unknown:
        raise ValueError(f"unknown channel settings {sorted(unknown)}")
    async with pool.connection() as conn:
        for kind, categories in changes.items():
            if not categories:
                continue
            columns = sorted(categories)
            names = ", ".join(columns)
            values = ", ".join(["%s"] * len(columns))
            updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns)
            await conn.execute(
                f"INSERT INTO kanal_einstellungen (user_id, art, {names}) VALUES"
                f" (%s, %s, {values}) ON CONFLICT (user_id, art) DO UPDATE SET"
                f" {updates}, geaendert_am = now()",
                (user_id, kind, *(bool(categories[c]) for c in columns)),
            )
