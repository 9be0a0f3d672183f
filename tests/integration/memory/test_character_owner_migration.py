"""Migration 014 gives the characters imported before ownership existed to the users the
stored data names (lorebook provenance first, else conversations), one row per user; a
card character without evidence and the built-in ones stay shared. It is run here on the
schema the earlier migrations build, in a schema of its own, twice: the second run
changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from novaberg.runtime.services import Endpoints
from novaberg.store.migrate import DIM_PLACEHOLDER, core_migrations

SCHEMA = "vor_besitz"
OWNER_MIGRATION = "014_character_owner.sql"


@pytest.fixture
async def old_schema(endpoints: Endpoints) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """A connection whose search path is a schema built by migrations 001-013 only."""
    conn = await psycopg.AsyncConnection.connect(
        endpoints.database_url, autocommit=True, row_factory=dict_row
    )
    await conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    await conn.execute(f"CREATE SCHEMA {SCHEMA}")
    await conn.execute(f"SET search_path TO {SCHEMA}, public")
    for migration in core_migrations():
        if migration.name >= OWNER_MIGRATION:
            break
        await conn.execute(migration.sql.replace(DIM_PLACEHOLDER, "384"))  # type: ignore[arg-type]
    try:
        yield conn
    finally:
        await conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
        await conn.close()


async def add_character(conn: psycopg.AsyncConnection[Any], character_id: str) -> None:
    await conn.execute(
        "INSERT INTO characters (character_id, name, beschreibung, erste_nachricht, karte,"
        " karten_hash, avatar, avatar_typ) VALUES (%s, %s, 'Beschreibung', 'Hallo',"
        " '{\"spec\": \"chara_card_v2\"}', %s, '\\x89504e47', 'image/png')",
        (character_id, character_id.title(), f"hash-{character_id}"),
    )


async def add_node(conn: psycopg.AsyncConnection[Any], user: str, character: str, key: str) -> None:
    await conn.execute(
        "INSERT INTO lzg_knoten (kzg_quell_key, user_id, character_id, inhalt, embedding,"
        " gewicht_roh, gewicht_absolut, gewicht_decay)"
        " VALUES (%s, %s, %s, 'Wissen', array_fill(0.1, ARRAY[384])::vector, 1, 1, 1)",
        (key, user, character),
    )


async def add_archived_turn(conn: psycopg.AsyncConnection[Any], user: str, character: str) -> None:
    await conn.execute(
        "INSERT INTO gespraechsarchiv (user_id, character_id, sprecher, inhalt, zeit, herkunft,"
        " quelle, quell_id) VALUES (%s, %s, 'user', 'Hallo', now(), 'import', 'jsonl', '1')",
        (user, character),
    )


async def add_log_row(
    conn: psycopg.AsyncConnection[Any], user: str, character: str, art: str
) -> None:
    await conn.execute(
        "INSERT INTO pipeline_log (quelle, node, art, user_id, character_id)"
        " VALUES ('character', 'dispatcher', %s, %s, %s)",
        (art, user, character),
    )


async def owners(conn: psycopg.AsyncConnection[Any]) -> set[tuple[str, str]]:
    rows = await (await conn.execute("SELECT besitzer, character_id FROM characters")).fetchall()
    return {(r["besitzer"], r["character_id"]) for r in rows}


async def test_imported_characters_go_to_the_users_the_data_names(
    old_schema: psycopg.AsyncConnection[Any],
) -> None:
    conn = old_schema
    for character in ("lore", "gespraech", "beides", "waise"):
        await add_character(conn, character)
    # the lorebook of a card, imported by two users
    await add_node(conn, "alice", "lore", "karte:alice:lore:0")
    await add_node(conn, "bob", "lore", "karte:bob:lore:0")
    await add_node(conn, "zora", "lore", "kzg:zora:lore:123")  # a memory, not a card's lore
    # no lore: who talked with it (the archive, the raw turns of the log)
    await add_archived_turn(conn, "carla", "gespraech")
    await add_log_row(conn, "dora", "gespraech", "turn_roh")
    await add_log_row(conn, "emil", "gespraech", "node")  # a node's log row: no conversation
    # lore names its importer; someone who only talked with it is not an owner
    await add_node(conn, "alice", "beides", "karte:alice:beides:7")
    await add_archived_turn(conn, "erik", "beides")
    # no evidence at all, and the built-in character someone talked with
    await add_log_row(conn, "fritz", "waise", "node")
    await add_archived_turn(conn, "alice", "nova")

    (migration,) = [m for m in core_migrations() if m.name == OWNER_MIGRATION]
    expected = {
        ("alice", "lore"),
        ("bob", "lore"),
        ("carla", "gespraech"),
        ("dora", "gespraech"),
        ("alice", "beides"),
        ("", "waise"),
        ("", "nova"),
    }
    for _ in range(2):  # the second run changes nothing
        await conn.execute(migration.sql)  # type: ignore[arg-type]
        assert await owners(conn) == expected

    copied = await (
        await conn.execute(
            "SELECT name, beschreibung, erste_nachricht, karte, karten_hash, avatar, avatar_typ"
            " FROM characters WHERE character_id = 'lore' ORDER BY besitzer"
        )
    ).fetchall()
    assert len(copied) == 2 and copied[0] == copied[1], "each owner gets the whole row"
    assert copied[0]["karten_hash"] == "hash-lore" and bytes(copied[0]["avatar"]) == b"\x89PNG"
    key = await (
        await conn.execute(
            "SELECT array_agg(a.attname ORDER BY k.n) AS cols FROM pg_constraint c,"
            " unnest(c.conkey) WITH ORDINALITY k(attnum, n)"
            " JOIN pg_attribute a ON a.attnum = k.attnum"
            " WHERE c.conrelid = 'characters'::regclass AND c.contype = 'p'"
            " AND a.attrelid = c.conrelid"
        )
    ).fetchone()
    assert key is not None and key["cols"] == ["besitzer", "character_id"]
