"""What keeps the archive search fast in a large archive, against the real PostgreSQL: the
queries are planned with their parameters (never a prepared generic plan), and a misspelt
word is never corrected to a word of every other turn."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from psycopg_pool import AsyncConnectionPool

from novaberg.imports.chat_formats import parse_chat
from novaberg.imports.chat_import import ImportReport, import_chat
from novaberg.llm.layer import ModelLayer
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import archive, text_search
from novaberg.store.postgres import create_pool

PAIR = Pair("meister", "nova")
TZ = ZoneInfo("Europe/Berlin")


def _line(ident: str, text: str, when: datetime) -> dict[str, Any]:
    return {"id": ident, "speaker": "user", "text": text, "time": when.isoformat()}


def sample_lines() -> list[dict[str, Any]]:
    return [
        _line(
            "fact",
            "Mein Nachbar heißt übrigens Korbinian Wegscheider.",
            datetime(2026, 3, 2, tzinfo=UTC),
        ),
        _line("car", "Im März war das Auto in der Werkstatt.", datetime(2026, 3, 20, tzinfo=UTC)),
        _line("car2", "Das Auto springt wieder nicht an.", datetime(2026, 4, 20, tzinfo=UTC)),
    ]


async def store_chat(
    db: AsyncConnectionPool, model: ModelLayer, lines: list[dict[str, Any]]
) -> ImportReport:
    data = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode()
    return await import_chat(db, model, PAIR, parse_chat(data, tz=TZ, name="test.jsonl"))


RUNS = 14
"""The driver would prepare a statement at its fifth run (outside a pipeline); the server
weighs a generic plan from the sixth run of a prepared statement on."""


@pytest.fixture
async def own_pool(
    db: AsyncConnectionPool, endpoints: Endpoints
) -> AsyncIterator[AsyncConnectionPool]:
    """One fresh connection: its prepared statements are only this test's."""
    pool = await create_pool(endpoints.database_url, max_size=1)
    yield pool
    await pool.close()


async def test_the_archive_queries_are_planned_with_their_parameters(
    db: AsyncConnectionPool, own_pool: AsyncConnectionPool, model: ModelLayer
) -> None:
    await store_chat(db, model, sample_lines())
    window = archive.Filters((datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC)))
    vector = np.asarray((await model.embed(["Auto Werkstatt"]))[0], dtype=np.float32)
    async with own_pool.connection() as conn:
        terms = await text_search.query_terms(conn, PAIR, "Auto Werkstatt")
        for _ in range(RUNS):
            found = await archive.nearest_views(
                conn,
                PAIR,
                vector,
                5,
                views=(archive.VIEW_TURN, archive.VIEW_CONTEXT),
                filters=window,
                candidates=archive.EXACT_LIMIT + 1,  # the HNSW branch, as in a large archive
            )
            assert found[archive.VIEW_TURN][0][0] == found[archive.VIEW_CONTEXT][0][0]
            assert await archive.lexical(conn, PAIR, terms, 5, filters=window, with_next=True)
        cur = await conn.execute(
            "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
        )
        prepared = await cur.fetchall()
    assert not [p for p in prepared if "<=>" in p["statement"]], (
        "the views' queries go out in a pipeline, which prepares nothing: each run is"
        " planned with its parameters (a generic plan guesses the window's size and may"
        " rank it exactly)"
    )
    assert not [p for p in prepared if "@@" in p["statement"]], (
        "the words' query is never prepared: the terms' selectivity decides its plan"
    )
    assert not [p for p in prepared if p["generic_plans"]], "no generic plan on this path"


async def test_a_misspelt_word_is_never_corrected_to_a_frequent_lexeme(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    lines = [
        {"id": f"l{i}", "speaker": "user", "text": "Das dauerte lang.", "time": t.isoformat()}
        for i in range(250)
        if (t := start + timedelta(hours=i))
    ]
    await store_chat(db, model, [*sample_lines(), *lines])
    async with db.connection() as conn:
        terms = await text_search.query_terms(conn, PAIR, "Lanng Korbinain")
        assert set(terms.unknown_words) == {"lanng", "korbinain"}
        assert text_search.frequent_df(terms.rows) < 250
        corrected = await text_search.corrected_terms(conn, PAIR, terms)
        alone = await text_search.corrected_terms(
            conn, PAIR, text_search.build_terms([("lanng", "lanng", 0)], terms.rows, 3.0)
        )
    assert corrected is not None and corrected.lexemes == ["korbinian"], (
        "the rare name is corrected; 'lang', in 250 of the turns, is not"
    )
    assert alone is None, "nothing rare resembles the word: no trigram list at all"


GIN_INDEXES = ("gespraechsarchiv_tsv", "archiv_lexeme_trgm", "lzg_knoten_tsv")


async def test_new_rows_go_straight_into_the_search_indexes(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await store_chat(db, model, sample_lines())
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT relname, reloptions FROM pg_class WHERE relname = ANY(%s)", (list(GIN_INDEXES),)
        )
        options = {row["relname"]: row["reloptions"] for row in await cur.fetchall()}
        cur = await conn.execute(
            "SELECT gin_clean_pending_list('gespraechsarchiv_tsv'::regclass) AS turns,"
            " gin_clean_pending_list('archiv_lexeme_trgm'::regclass) AS vocabulary"
        )
        pending = await cur.fetchone()
    assert options == {name: ["fastupdate=off"] for name in GIN_INDEXES}
    assert pending == {"turns": 0, "vocabulary": 0}, (
        "no pending list a search would have to read through"
    )


async def test_an_archive_row_keeps_its_vectors_in_the_row(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await store_chat(db, model, sample_lines())
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT pg_relation_size(reltoastrelid) AS toast FROM pg_class"
            " WHERE relname = 'gespraechsarchiv'"
        )
        toast = await cur.fetchone()
        cur = await conn.execute(
            "SELECT min(pg_column_size(a.*)) AS row_bytes FROM gespraechsarchiv a"
            " WHERE embedding_kontext IS NOT NULL"
        )
        smallest = await cur.fetchone()
    assert smallest is not None and smallest["row_bytes"] > 2 * 384 * 4, "both vectors"
    assert toast == {"toast": 0}, "an exact ranking reads one page per row, not the TOAST table"
