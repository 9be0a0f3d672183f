"""Reads of the library for the person looking at it (the page, the API): one of her roots by
id, and one of her passages with its neighbours in the file. Every read names the person,
so an id of someone else's root or passage finds nothing (the API answers 404 as for an id
that does not exist). Tables: migration 019 (store/library.py writes them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from psycopg import AsyncConnection

from novaberg.store.library import ROOT_APPROVED, Root


@dataclass(frozen=True, slots=True)
class FilePassage:
    """A passage with where it stands: its file relative to its root, the root's path and id,
    and its position among the file's passages (0-based)."""

    id: int
    position: int
    text: str
    heading: str
    page: int | None
    line_from: int
    line_to: int
    file_path: str
    root_path: str
    root_id: int


async def own_root(conn: AsyncConnection[Any], user_id: str, root_id: int) -> Root | None:
    """The approved root `root_id` if it is `user_id`'s, else None."""
    cur = await conn.execute(
        "SELECT id, user_id, pfad AS path, zustand AS state, freigegeben_am AS approved_at"
        " FROM dateien_wurzeln WHERE id = %s AND user_id = %s AND zustand = %s",
        (root_id, user_id, ROOT_APPROVED),
    )
    row = await cur.fetchone()
    return Root(**row) if row else None


_AROUND_SQL: Final = """
WITH ziel AS (
    SELECT datei_id, position FROM dateien_abschnitte WHERE id = %(id)s AND user_id = %(u)s
)
SELECT c.id, c.position, c.inhalt AS text, c.ueberschrift AS heading, c.seite AS page,
       c.zeile_von AS line_from, c.zeile_bis AS line_to, f.pfad AS file_path,
       w.pfad AS root_path, w.id AS root_id
FROM ziel z
JOIN dateien_abschnitte c ON c.datei_id = z.datei_id
     AND c.position BETWEEN z.position - %(k)s AND z.position + %(k)s
JOIN dateien_index f ON f.id = c.datei_id
JOIN dateien_wurzeln w ON w.id = f.wurzel_id AND w.zustand = 'freigegeben'
ORDER BY c.position
"""


async def passage_around(
    conn: AsyncConnection[Any], user_id: str, passage_id: int, around: int
) -> list[FilePassage]:
    """Passage `passage_id` of `user_id` with up to `around` passages of the same file before
    and after it, in the file's order; empty when it is not hers (or gone)."""
    cur = await conn.execute(_AROUND_SQL, {"id": passage_id, "u": user_id, "k": around})
    return [FilePassage(**row) for row in await cur.fetchall()]
