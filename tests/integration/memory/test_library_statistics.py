"""The library's word statistics (migration 023) against the real PostgreSQL: the passage
and lexeme counts per person equal a recount over the passages after every kind of write
(indexing, a changed file, a deleted file, a revoked folder, an updated passage), and the
word list uses them: a word in nearly every passage does not bring passages on its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.layer import ModelLayer
from novaberg.memory.library.indexer import LibraryLimits, index_root
from novaberg.memory.library.roots import approve, checked_folder, revoke
from novaberg.memory.library.search import search_library
from novaberg.store import library

USER = "meister"
OTHER = "jemand"
LIMITS = LibraryLimits(1024 * 1024, 1000, 10_000)


async def _stats(db: AsyncConnectionPool) -> tuple[dict[Any, int], dict[Any, int]]:
    """(stored, recounted): passages and lexeme lengths per person, df per (person, lexeme)."""
    async with db.connection() as conn:
        stored: dict[Any, int] = {}
        recount: dict[Any, int] = {}
        for row in await (
            await conn.execute("SELECT user_id, anzahl, laenge FROM bibliothek_person")
        ).fetchall():
            if row["anzahl"]:  # a person whose passages all went keeps a zero row
                stored[(row["user_id"], "#")] = row["anzahl"]
                stored[(row["user_id"], "#len")] = row["laenge"]
        for row in await (
            await conn.execute("SELECT user_id, lexem, df FROM bibliothek_lexeme")
        ).fetchall():
            stored[(row["user_id"], row["lexem"])] = row["df"]
        for row in await (
            await conn.execute(
                "SELECT user_id, count(*) AS n, sum(length(tsv)) AS l FROM dateien_abschnitte"
                " GROUP BY user_id"
            )
        ).fetchall():
            recount[(row["user_id"], "#")] = row["n"]
            recount[(row["user_id"], "#len")] = row["l"]
        for row in await (
            await conn.execute(
                "SELECT user_id, l AS lexem, count(*) AS df FROM dateien_abschnitte,"
                " unnest(tsvector_to_array(tsv)) AS l GROUP BY 1, 2"
            )
        ).fetchall():
            recount[(row["user_id"], row["lexem"])] = row["df"]
    return stored, recount


def _df(stats: dict[Any, int], user: str, stem: str) -> int:
    """The df of the person's lexeme that starts with `stem` (0: none)."""
    return sum(df for (who, lexeme), df in stats.items() if who == user and lexeme.startswith(stem))


async def _exact(db: AsyncConnectionPool, step: str) -> dict[Any, int]:
    stored, recount = await _stats(db)
    assert stored == recount, f"statistics differ from a recount after {step}"
    return stored


async def test_the_statistics_equal_a_recount_after_every_write(
    db: AsyncConnectionPool, model: ModelLayer, tmp_path: Path
) -> None:
    mine, theirs = tmp_path / "Notizen", tmp_path / "Andere"
    mine.mkdir()
    theirs.mkdir()
    (mine / "garten.md").write_text("# Garten\n\nDie Tomaten kommen im Mai ins Beet.\n")
    (mine / "rezept.md").write_text("# Apfelkuchen\n\nSechs Aepfel schaelen, eine Stunde backen.\n")
    (theirs / "liste.md").write_text("# Einkauf\n\nTomaten, Brot und Milch.\n")
    root = await approve(db, USER, checked_folder(mine, LIMITS))
    await index_root(db, model, root, LIMITS)
    await index_root(db, model, await approve(db, OTHER, checked_folder(theirs, LIMITS)), LIMITS)
    indexed = await _exact(db, "indexing")
    assert indexed[(USER, "tomat")] == 1 and indexed[(OTHER, "tomat")] == 1

    (mine / "garten.md").write_text("# Garten\n\nDie Kartoffeln kommen im April in die Erde.\n")
    (mine / "rezept.md").unlink()
    await index_root(db, model, root, LIMITS)
    changed = await _exact(db, "a changed and a deleted file")
    assert (USER, "tomat") not in changed and (USER, "apfelkuch") not in changed
    assert _df(changed, USER, "kartoffel") == 1

    async with db.connection() as conn:
        await conn.execute(
            "UPDATE dateien_abschnitte SET inhalt = 'Die Zwiebeln kommen im April.'"
            " WHERE user_id = %s",
            (USER,),
        )
    updated = await _exact(db, "an updated passage")
    assert _df(updated, USER, "kartoffel") == 0 and _df(updated, USER, "zwiebel") == 1

    await revoke(db, USER, mine)
    revoked = await _exact(db, "revoking the folder")
    assert {person for person, _ in revoked} == {OTHER}, "only the other library is left"


async def test_a_word_in_nearly_every_passage_does_not_bring_passages_alone(
    db: AsyncConnectionPool, model: ModelLayer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with db.connection() as conn:
        root = await library.approve_root(conn, USER, str(tmp_path))
        for n in range(260):  # FREQUENT_MIN_DF is 200: "notiz" is frequent here
            text = f"Notiz {n}: Heute den Keller aufgeraeumt und Kiste {n} beschriftet."
            if n % 12 == 0:
                text += " Das Regal ist voll."
            if n == 77:
                text = "Notiz 77: Der Zitronenbaum braucht im Winter Licht und wenig Wasser."
            await library.save_file(
                conn,
                root,
                library.FileRecord(f"notiz{n}.md", str(n), 0.0, 1, library.FILE_OK),
                [library.ChunkRow(text, "", None, 1, 1, "german", None)],
            )
    await _exact(db, "saving 260 files")

    hits = await search_library(db, model, USER, "Notiz Zitronenbaum", embed=False)
    assert [hit.text[:8] for hit in hits] == ["Notiz 77"], "the frequent word selects nothing"
    assert await search_library(db, model, USER, "Notiz", embed=False) == [], (
        "a word of every passage tells none apart"
    )
    monkeypatch.setattr(library, "FREQUENT_MIN_DF", 10)  # "regal" (22 of 260) is frequent too
    shelves = await search_library(db, model, USER, "Notiz Regal", limit=20, embed=False)
    assert len(shelves) == 20 and all("Regal" in hit.text for hit in shelves), (
        "when every word is frequent, the rarest still selects unless it is in most passages"
    )
