"""Export → restore into a fresh installation (a second database on the embedded
PostgreSQL, another Redis database): the same history, the same memory search results,
the same tasks and rows; restoring twice adds nothing; `--as-user` maps to another name;
ids other people use refuse the restore before anything is written."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import psycopg
import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from typer.testing import CliRunner

from novaberg.agents.registry import agent_migrations
from novaberg.cli import app as cli_app
from novaberg.llm.layer import ModelLayer
from novaberg.memory.archive import archive_live_turn
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import SearchOptions
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import keys
from novaberg.store.conversation_history import read_history
from novaberg.store.migrate import migrate
from novaberg.store.postgres import create_pool
from novaberg.store.redis_client import create_redis
from novaberg.store.short_term import encode_vector
from novaberg.store.transfer.archive_format import ArchiveRefused, read_archive
from novaberg.store.transfer.export import _rows, export_person
from novaberg.store.transfer.redis_state import raw_client
from novaberg.store.transfer.restore import restore_archive
from novaberg.store.transfer.tables import TABLES

PAIR = Pair("meister", "nova")
TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 5, 14, 12, 0, tzinfo=UTC)
TARGET_DB = "novaberg_restore_target"
TARGET_REDIS_DB = 7
AVATAR = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@dataclass
class Installation:
    pool: AsyncConnectionPool
    redis: aioredis.Redis
    database_url: str
    redis_url: str


@pytest.fixture
async def target(endpoints: Endpoints) -> AsyncIterator[Installation]:
    """A fresh installation: its own database (migrated as a new home would be) and its
    own Redis database, both empty."""
    with psycopg.connect(endpoints.database_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {TARGET_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {TARGET_DB}")
    url = endpoints.database_url.replace("/novaberg?", f"/{TARGET_DB}?")
    assert url != endpoints.database_url
    migrate(url, 384, agent_migrations())
    redis_url = f"{endpoints.redis_url}?db={TARGET_REDIS_DB}"
    redis = create_redis(redis_url)
    await redis.flushdb()
    pool = await create_pool(url, max_size=2)
    try:
        yield Installation(pool, redis, url, redis_url)
    finally:
        await pool.close()
        await redis.flushdb()
        await redis.aclose()


async def _seed(db: AsyncConnectionPool, redis: aioredis.Redis, model: ModelLayer) -> None:
    """A person with an archive, short- and long-term memory, history, an appointment, a
    task, a directive, a persona, impulse settings and an own character with an avatar."""
    for day, text in enumerate(
        ["Ich segle am liebsten auf dem Gardasee.", "Mein Nachbar heißt Korbinian."]
    ):
        await archive_live_turn(
            db,
            model,
            PAIR,
            speaker="user",
            text=text,
            time=NOW - timedelta(days=40 - day),
            turn_id=f"t-{day}",
            message_ids=[f"n-{day}"],
            origin="user",
        )
    kern = "Der Nutzer segelt gern auf dem Gardasee."
    entry = keys.short_term_entry(PAIR, 5)
    await redis.hset(
        entry,
        mapping={
            "inhalt": kern,
            "salienz": "0.8",
            "beobachter": "user",
            "turn_id": "t-0",
            "erstellt_am": repr((NOW - timedelta(days=40)).timestamp()),
            "embedding": encode_vector((await model.embed([kern]))[0]),
        },
    )
    await redis.expire(entry, 3600)
    await redis.sadd(keys.short_term_index(PAIR), entry)
    await redis.set(keys.nova_state(PAIR), json.dumps({"stimmung": "heiter"}))
    await redis.set(keys.turn_marker(PAIR), "laeuft")  # transient: must not travel
    vector = np.asarray((await model.embed(["Segeln Gardasee Glück"]))[0], dtype=np.float32)
    async with db.connection() as conn:
        await conn.execute("INSERT INTO users (user_id, display_name) VALUES ('meister', 'M')")
        await conn.execute(
            "INSERT INTO nutzer_persona (user_id, name, beschreibung) VALUES"
            " ('meister', 'Meister Eder', 'Schreiner')"
        )
        await conn.execute(
            "INSERT INTO characters (character_id, name, beschreibung, system_prompt, besitzer,"
            " avatar, avatar_typ) VALUES ('kaethe', 'Käthe', 'Nachbarin', '', 'meister', %s,"
            " 'image/png')",
            (AVATAR,),
        )
        node = await (
            await conn.execute(
                "INSERT INTO lzg_knoten (kzg_quell_key, user_id, character_id, inhalt, embedding,"
                " gewicht_roh, gewicht_absolut, gewicht_decay, sprache) VALUES"
                " ('kzg:meister:nova:1', 'meister', 'nova',"
                " 'Segeln auf dem Gardasee ist sein Glück.', %s, 1, 3, 3, 'german') RETURNING id",
                (vector,),
            )
        ).fetchone()
        assert node is not None
        await conn.execute(
            "INSERT INTO lzg_befoerderung (kzg_key, lzg_id, aktion) VALUES (%s, %s, 'verstaerkt')",
            (entry, node["id"]),
        )
        appointment = await (
            await conn.execute(
                "INSERT INTO timeline (user_id, event_time, event_type, title, remind)"
                " VALUES ('meister', %s, 'termin', 'Zahnarzt', true) RETURNING id",
                (NOW + timedelta(days=3),),
            )
        ).fetchone()
        assert appointment is not None
        await conn.execute(
            "INSERT INTO notizen (user_id, name, typ, text, status, timeline_id) VALUES"
            " ('meister', 'Bohrmaschine', 'aufgabe', 'Bohrmaschine zurückgeben', 'offen', %s)",
            (appointment["id"],),
        )
        await conn.execute(
            "INSERT INTO direktiven (user_id, anweisung) VALUES ('meister', 'Sprich bayerisch.')"
        )
        await conn.execute(
            "INSERT INTO impuls_einstellungen (user_id, character_id, impulse, pro_tag)"
            " VALUES ('meister', 'nova', false, 2)"
        )
        for number, text in enumerate(["Servus!", "Wie geht's?"]):
            await conn.execute(
                "INSERT INTO pipeline_log (turn_id, quelle, node, art, inhalt, user_id,"
                " character_id) VALUES (%s, 'dispatcher', 'dispatch', 'turn_roh', %s,"
                " 'meister', 'nova')",
                (f"t-{number}", json.dumps({"nachricht": text, "antwort": "Grüß Gott."})),
            )
        await conn.execute(  # a diagnostic row: stays behind
            "INSERT INTO pipeline_log (turn_id, quelle, node, art, inhalt, user_id, character_id)"
            " VALUES ('t-0', 'graph', 'router', 'node', '{}', 'meister', 'nova')"
        )
        await conn.execute(  # someone else's data: never exported with meister
            "INSERT INTO direktiven (user_id, anweisung) VALUES ('andere', 'Geheim.')"
        )


async def _tables(pool: AsyncConnectionPool, user: str, *, ignore: tuple[str, ...] = ()) -> dict:
    """Every exported table's rows of `user`, as JSON text, without generated columns."""
    out: dict[str, list[str]] = {}
    async with pool.connection() as conn:
        for spec in TABLES:
            if spec.name in ignore:
                continue

            rows = await _rows(conn, spec, user, None)
            out[spec.name] = sorted(json.dumps(r, sort_keys=True) for r in rows)
    return out


async def _search(inst: Installation, model: ModelLayer, pair: Pair, query: str) -> list:
    result = await search_memory(
        inst.redis, inst.pool, model, pair, query, now=NOW, tz=TZ, options=SearchOptions()
    )
    return [
        {k: v for k, v in hit.as_json(rank).items() if k != "id"}
        for rank, hit in enumerate(result.hits, 1)
    ]


async def _history(pool: AsyncConnectionPool, pair: Pair) -> list:
    rows = await read_history(pool, pair, before_id=None, limit=50)
    return [(r["id"], r["turn_id"], r["art"], r["inhalt"]) for r in rows]


async def test_restore_into_a_fresh_installation_gives_the_same_data_and_twice_adds_nothing(
    db: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: ModelLayer,
    endpoints: Endpoints,
    target: Installation,
) -> None:
    await _seed(db, redis, model)
    source = Installation(db, redis, endpoints.database_url, endpoints.redis_url)
    lines: list[str] = []
    archive = await export_person(db, redis, "meister", embed_dim=384, progress=lines.append)
    assert len(lines) == len(TABLES) + 1, "one progress line per table and one for Redis"
    assert archive.files == {"avatars/kaethe.png": AVATAR}
    assert not any("andere" in json.dumps(rows) for rows in archive.tables.values())
    assert [r["art"] for r in archive.tables["pipeline_log"]] == ["turn_roh", "turn_roh"]
    assert keys.turn_marker(PAIR) not in {item["key"] for item in archive.redis}

    restored = read_archive(archive.to_bytes())
    report = await restore_archive(target.pool, target.redis, restored)
    assert report.total_added > 0

    assert await _tables(target.pool, "meister") == await _tables(db, "meister")
    assert await _history(target.pool, PAIR) == await _history(db, PAIR)
    for query in ("Gardasee segeln", "Korbinian", "Nachbar"):
        hits = await _search(source, model, PAIR, query)
        assert hits, query
        assert await _search(target, model, PAIR, query) == hits, query
    raw_target, raw_source = raw_client(target.redis), raw_client(redis)
    entry = keys.short_term_entry(PAIR, 5)
    assert await raw_target.hgetall(entry) == await raw_source.hgetall(entry)  # embedding too
    await raw_target.aclose()
    await raw_source.aclose()
    assert 0 < await target.redis.ttl(keys.short_term_entry(PAIR, 5)) <= 3600
    assert not await target.redis.exists(keys.turn_marker(PAIR))

    again = await restore_archive(target.pool, target.redis, restored)
    assert again.total_added == 0, again.added
    assert await _tables(target.pool, "meister") == await _tables(db, "meister")

    async with target.pool.connection() as conn:  # sequences moved past the restored ids
        await conn.execute("INSERT INTO direktiven (user_id, anweisung) VALUES ('neu', 'x')")


async def test_as_user_restores_under_another_name(
    db: AsyncConnectionPool, redis: aioredis.Redis, model: ModelLayer, target: Installation
) -> None:
    await _seed(db, redis, model)
    archive = await export_person(db, redis, "meister", embed_dim=384)
    await restore_archive(target.pool, target.redis, archive, as_user="gast")
    guest = Pair("gast", "nova")
    source = Installation(db, redis, "", "")
    for query in ("Gardasee segeln", "Korbinian"):
        hits = json.dumps(await _search(source, model, PAIR, query))
        hits = hits.replace('"kzg:{meister}:', '"kzg:{gast}:')  # keys name the user (tagged)
        renamed = json.loads(hits.replace('"kzg:meister:', '"kzg:gast:'))  # (rows from before)
        assert await _search(target, model, guest, query) == renamed
    assert await _history(target.pool, guest) == await _history(db, PAIR)
    assert await target.redis.sismember(
        keys.short_term_index(guest), keys.short_term_entry(guest, 5)
    )
    async with target.pool.connection() as conn:
        owners = await (
            await conn.execute("SELECT besitzer FROM characters WHERE character_id = 'kaethe'")
        ).fetchall()
        users = await (await conn.execute("SELECT user_id FROM users")).fetchall()
        promoted = await (await conn.execute("SELECT kzg_key FROM lzg_befoerderung")).fetchall()
    assert [r["besitzer"] for r in owners] == ["gast"]
    assert [r["user_id"] for r in users] == ["gast"]
    assert [r["kzg_key"] for r in promoted] == [keys.short_term_entry(guest, 5)]


async def test_ids_used_by_other_people_refuse_the_restore_and_write_nothing(
    db: AsyncConnectionPool, redis: aioredis.Redis, model: ModelLayer
) -> None:
    await _seed(db, redis, model)
    archive = await export_person(db, redis, "meister", embed_dim=384)
    with pytest.raises(ArchiveRefused, match="fresh installation"):
        await restore_archive(db, redis, archive, as_user="zweiter")
    async with db.connection() as conn:
        rows = await (
            await conn.execute("SELECT count(*) AS n FROM users WHERE user_id = 'zweiter'")
        ).fetchone()
    assert rows is not None and rows["n"] == 0


def test_cli_export_and_restore_print_progress_and_refuse_a_newer_version(
    tmp_path: Path, settings: Any, db: AsyncConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVABERG_HOME", str(settings.home))
    monkeypatch.setenv("NOVABERG_REDIS_URL", settings.redis_url)
    monkeypatch.setenv("NOVABERG_DATABASE_URL", settings.database_url)
    monkeypatch.setenv("NOVABERG_LLM", "scripted")
    monkeypatch.setenv("NOVABERG_EMBED_DIM", "384")
    runner = CliRunner()
    missing = runner.invoke(cli_app, ["export", "--user", "niemand", str(tmp_path / "x.zip")])
    assert missing.exit_code == 2 and "no user 'niemand'" in missing.output

    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        conn.execute("INSERT INTO users (user_id) VALUES ('meister')")
        conn.execute("INSERT INTO direktiven (user_id, anweisung) VALUES ('meister', 'Kurz.')")
    file = tmp_path / "meister.zip"
    done = runner.invoke(cli_app, ["export", "--user", "meister", str(file)])
    assert done.exit_code == 0, done.output
    assert f"export {len(TABLES)}/{len(TABLES)}" in done.output
    assert read_archive(file.read_bytes()).tables["direktiven"][0]["anweisung"] == "Kurz."

    again = runner.invoke(cli_app, ["restore", str(file)])
    assert again.exit_code == 0, again.output
    assert "0 new items" in again.output

    newer = tmp_path / "newer.zip"
    import zipfile

    with zipfile.ZipFile(file) as src, zipfile.ZipFile(newer, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "manifest.json":
                manifest = json.loads(data)
                manifest["version"] = 99
                data = json.dumps(manifest).encode()
            dst.writestr(name, data)
    refused = runner.invoke(cli_app, ["restore", str(newer)])
    assert refused.exit_code == 2
    assert "format version 99" in refused.output and "Update Novaberg" in refused.output


async def test_another_embedding_size_is_refused_with_a_sentence(
    db: AsyncConnectionPool, redis: aioredis.Redis, model: ModelLayer, target: Installation
) -> None:
    await _seed(db, redis, model)
    archive = await export_person(db, redis, "meister", embed_dim=384)
    archive.embed_dim = 768
    with pytest.raises(ArchiveRefused, match="768 dimensions; this installation uses 384"):
        await restore_archive(target.pool, target.redis, archive)
    assert await _tables(target.pool, "meister") == {spec.name: [] for spec in TABLES}


async def test_a_pair_used_before_the_restore_keeps_its_entries_and_gains_the_restored(
    db: AsyncConnectionPool, redis: aioredis.Redis, model: ModelLayer, target: Installation
) -> None:
    await _seed(db, redis, model)
    archive = await export_person(db, redis, "meister", embed_dim=384)
    own = keys.short_term_entry(PAIR, 9)
    await target.redis.sadd(keys.short_term_index(PAIR), own)
    await restore_archive(target.pool, target.redis, archive)
    assert await target.redis.smembers(keys.short_term_index(PAIR)) == {
        own,
        keys.short_term_entry(PAIR, 5),
    }


def test_cli_round_trip_into_a_fresh_home_with_its_own_servers(
    tmp_path: Path,
    settings: Any,
    db: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: ModelLayer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`novaberg export` here, `novaberg restore` in a new NOVABERG_HOME whose embedded
    PostgreSQL and Valkey the command starts itself (schema included)."""
    import asyncio

    from novaberg.config import load_settings
    from novaberg.runtime.services import EmbeddedServices

    runner = CliRunner()
    for name in ("NOVABERG_REDIS_URL", "NOVABERG_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NOVABERG_LLM", "scripted")
    monkeypatch.setenv("NOVABERG_EMBED_DIM", "384")
    monkeypatch.setenv("NOVABERG_PIXIE", "false")
    file = tmp_path / "meister.zip"
    seeded = asyncio.run(_seed_and_read(settings, model))
    monkeypatch.setenv("NOVABERG_HOME", str(settings.home))
    monkeypatch.setenv("NOVABERG_REDIS_URL", settings.redis_url)
    monkeypatch.setenv("NOVABERG_DATABASE_URL", settings.database_url)
    done = runner.invoke(cli_app, ["export", "--user", "meister", str(file)])
    assert done.exit_code == 0, done.output

    fresh = tmp_path / "frisch"
    monkeypatch.setenv("NOVABERG_HOME", str(fresh))
    monkeypatch.delenv("NOVABERG_REDIS_URL")
    monkeypatch.delenv("NOVABERG_DATABASE_URL")
    restored = runner.invoke(cli_app, ["restore", str(file)])
    assert restored.exit_code == 0, restored.output
    assert f"restore {len(TABLES)}/{len(TABLES)}" in restored.output

    services = EmbeddedServices(load_settings(home=fresh, llm="scripted", embed_dim=384))
    endpoints = services.start()
    try:
        assert asyncio.run(_read(endpoints.database_url, endpoints.redis_url, model)) == seeded
    finally:
        services.stop()


async def _read(database_url: str, redis_url: str, model: ModelLayer) -> tuple:
    pool = await create_pool(database_url, max_size=2)
    client = create_redis(redis_url)
    try:
        inst = Installation(pool, client, database_url, redis_url)
        return (
            await _tables(pool, "meister"),
            await _history(pool, PAIR),
            [await _search(inst, model, PAIR, q) for q in ("Gardasee segeln", "Korbinian")],
        )
    finally:
        await pool.close()
        await client.aclose()


async def _seed_and_read(settings: Any, model: ModelLayer) -> tuple:
    pool = await create_pool(settings.database_url, max_size=2)
    client = create_redis(settings.redis_url)
    try:
        await _seed(pool, client, model)
    finally:
        await pool.close()
        await client.aclose()
    return await _read(settings.database_url, settings.redis_url, model)
