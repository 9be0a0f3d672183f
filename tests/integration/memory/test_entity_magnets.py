"""KZG entity magnets: short-term entries naming the same person or place strengthen each
other; the names resolve to rows of `entitaeten` (real Redis and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.layer import ModelLayer
from novaberg.memory import curve
from novaberg.memory.short_term.creation import ShortTermWriter
from novaberg.memory.short_term.magnets import MAGNET_FIELDS
from novaberg.pair import Pair
from novaberg.store.entities import (
    Resolution,
    _resolve_in_order,
    match_entity,
    normalise_name,
    resolve_entities,
)
from novaberg.store.keys import short_term_index

PAIR = Pair("meister", "nova")
OTHER = Pair("anna", "nova")


class Clock:
    def __init__(self, now: float = 1_790_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def daten(
    segment: str, themen: list[str], entities: list[str], salienz: float = 0.5
) -> dict[str, Any]:
    obj = {
        "themen": themen,
        "salienz": salienz,
        "gedaechtnistyp": "kurz",
        "dimension": "kontext",
        "intentionen": ["information_teilen"],
        "entitaeten_roh": entities,
    }
    return {"salienz_obj": obj, "segment": segment, "segment_index": 0, "segment_gesamt": 1}


@pytest.fixture
def memory(redis: aioredis.Redis, model: ModelLayer, db: AsyncConnectionPool) -> ShortTermWriter:
    return ShortTermWriter(redis, model, pool=db, clock=Clock(), promotions=False)


def test_names_match_whole_words_and_ambiguity_is_named() -> None:
    assert normalise_name("  Dr. Anna-Berg ") == "dr anna berg"
    known = {"anna berg": 1, "anna schmidt": 2, "köln": 3}
    assert match_entity("köln", known) == 3
    assert match_entity("berg", known) == 1
    assert match_entity("anna", known) == "mehrdeutig"
    assert match_entity("rom", known) is None
    assert match_entity("kö", known) is None, "parts of words are not names"


async def test_resolution_creates_reuses_and_skips_ambiguous(db: AsyncConnectionPool) -> None:
    first = await resolve_entities(db, PAIR, ["Anna Berg", "Anna Schmidt", "Köln", "köln"])
    assert first.created == ["Anna Berg", "Anna Schmidt", "Köln"] and len(first.ids) == 3
    again = await resolve_entities(db, PAIR, ["Köln", "Berg", "Anna"])
    assert again.created == [] and again.ambiguous == ["Anna"]
    assert again.ids == [first.ids[2], first.ids[0]]
    other = await resolve_entities(db, OTHER, ["Köln"])
    assert other.created == ["Köln"] and other.ids[0] not in first.ids  # per pair


SCENARIOS = [
    (["Anna Berg", "Anna Schmidt", "Köln"], ["Köln", "Berg", "Anna", "Rom"]),
    (["Lena"], ["Lena Hansen", "Hamburg", "Jazz"]),
    ([], ["Anna", "Köln", "köln", "Berlin Mitte"]),
    (["Anna Berg"], ["Anna Berg", "Anna", "Berg"]),
    (["Köln"], ["Rom", "Dr. Rom Maier", "Köln"]),
]
"""Names known before, then the names of one call (known, parts, ambiguous, new); the
last two name names that fit each other."""


async def _named(db: AsyncConnectionPool, pair: Pair, resolution: Resolution) -> dict[str, Any]:
    """The resolution with names for ids, and the pair's rows (comparable across pairs)."""
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT id, name, name_norm FROM entitaeten WHERE user_id = %s AND character_id = %s"
            " ORDER BY id",
            (pair.user_id, pair.character_id),
        )
        rows = await cur.fetchall()
    norm_of = {row["id"]: row["name_norm"] for row in rows}
    return {
        "ids": [norm_of[i] for i in resolution.ids],
        "created": resolution.created,
        "ambiguous": resolution.ambiguous,
        "rows": [(row["name"], row["name_norm"]) for row in rows],
    }


@pytest.mark.parametrize(("before", "names"), SCENARIOS)
async def test_one_statement_resolves_as_name_by_name_does(
    db: AsyncConnectionPool, before: list[str], names: list[str]
) -> None:
    """`resolve_entities` (one statement when no name fits another) gives the mapping and
    the rows that matching and creating one name after the other gives."""
    alone, together = Pair("eins", "nova"), Pair("zwei", "nova")
    for pair in (alone, together):
        await resolve_entities(db, pair, before)
    async with db.connection() as conn:
        expected = await _resolve_in_order(
            conn, alone, [(n, normalise_name(n)) for n in dict.fromkeys(names)]
        )
    got = await resolve_entities(db, together, names)
    assert await _named(db, together, got) == await _named(db, alone, expected)


async def test_resolution_is_one_round_trip_on_one_connection(
    db: AsyncConnectionPool, pg_trips: Any
) -> None:
    await resolve_entities(db, PAIR, ["Anna Berg", "Köln"])
    again = await resolve_entities(db, PAIR, ["Berg", "Rom", "köln"])
    assert again.created == ["Rom"] and len(again.ids) == 3
    assert pg_trips.checkouts == 2 and len(pg_trips.trips) == 2, pg_trips.trips


async def test_names_that_fit_each_other_resolve_in_order(db: AsyncConnectionPool) -> None:
    """A name fits one created just before it in the same call ("Anna Berg", "Anna")."""
    got = await resolve_entities(db, PAIR, ["Anna Berg", "Anna", "Berg Anna"])
    assert got.created == ["Anna Berg", "Berg Anna"] and got.ambiguous == []
    assert len(got.ids) == 2


async def test_entries_naming_the_same_entity_strengthen_each_other(
    memory: ShortTermWriter, db: AsyncConnectionPool
) -> None:
    first = await memory.store_salience_write(
        PAIR, daten("Anna zieht nach Köln.", ["umzug"], ["Anna", "Köln"]), "user"
    )
    unrelated = await memory.store_salience_write(
        PAIR, daten("Das Wetter in Rom ist schön.", ["wetter"], ["Rom"]), "user"
    )
    assert first is not None and unrelated is not None
    second = await memory.store_salience_write(
        PAIR, daten("Anna hat eine neue Stelle.", ["arbeit"], ["Anna"]), "user"
    )
    assert second is not None

    async def fields(key: str) -> dict[str, str]:
        entry = await memory.store.get(key)
        assert entry is not None
        return entry.fields

    anna_köln, rome, anna = (
        await fields(first.key),
        await fields(unrelated.key),
        await fields(second.key),
    )
    async with db.connection() as conn:
        cur = await conn.execute("SELECT id, name FROM entitaeten ORDER BY id")
        ids = {row["name"]: row["id"] for row in await cur.fetchall()}
    assert set(ids) == {"Anna", "Köln", "Rom"}
    assert anna_köln["entitaet_ids"] == f"{ids['Anna']},{ids['Köln']}"
    assert anna["entitaet_ids"] == str(ids["Anna"])
    # the older Anna entry and the new one strengthened each other; Rome untouched
    assert anna_köln["haeufigkeit"] == "2" and anna["haeufigkeit"] == "2"
    assert rome["haeufigkeit"] == "1"
    assert float(anna_köln["salienz"]) == pytest.approx(curve.salience(0.5, 2))
    assert float(anna_köln["salienz"]) > float(rome["salienz"])
    assert second.reinforced == ()  # no shared theme: the entity alone pulled


async def test_a_shared_theme_and_entity_count_once(memory: ShortTermWriter) -> None:
    first = await memory.store_salience_write(
        PAIR, daten("Anna zieht nach Köln.", ["umzug"], ["Anna"]), "user"
    )
    second = await memory.store_salience_write(
        PAIR, daten("Anna packt Kisten.", ["umzug"], ["Anna"]), "user"
    )
    assert first is not None and second is not None
    entry = await memory.store.get(first.key)
    assert entry is not None and entry.fields["haeufigkeit"] == "2"  # theme, not theme + entity


async def test_without_a_database_entries_carry_no_entities(
    redis: aioredis.Redis, model: ModelLayer
) -> None:
    memory = ShortTermWriter(redis, model, clock=Clock(), promotions=False)
    stored = await memory.store_salience_write(
        PAIR, daten("Anna zieht nach Köln.", ["umzug"], ["Anna"]), "user"
    )
    assert stored is not None
    entry = await memory.store.get(stored.key)
    assert entry is not None and entry.fields["entitaet_ids"] == ""


async def test_the_create_call_reads_the_magnets_rows(memory: ShortTermWriter) -> None:
    """The new entry's create script returns the pair's magnet rows (the new entry among
    them) as `field_rows` reads them after it: no second read."""
    first = await memory.store_salience_write(
        PAIR, daten("Anna zieht nach Köln.", ["umzug"], ["Anna", "Köln"]), "user"
    )
    assert first is not None
    vector = (await memory.model.embed(["Lena wohnt."]))[0]  # the pair's dimension
    created = await memory.store.create_matching(
        PAIR,
        {
            "user_id": "meister",
            "inhalt": "Lena wohnt.",
            "entitaet_ids": "7",
            "salienz_eingang": "0.4",
        },
        vector,
        ttl_seconds=600,
        epoch_ms=1_790_000_100_000,
        themes=["familie"],
        rows_of=MAGNET_FIELDS,
    )
    assert created.rows == await memory.store.field_rows(PAIR, MAGNET_FIELDS)
    assert [key for key, _ in created.rows] == [first.key, created.key]
    assert created.rows[-1] == (created.key, ["7", "0.4"])
    plain = await memory.store.create_matching(
        PAIR, {"user_id": "meister"}, vector, ttl_seconds=600, epoch_ms=1, themes=None
    )
    assert plain.rows == [] and plain.matched == [] and plain.legacy == []


async def _hmget_calls(redis: aioredis.Redis) -> int:
    stats = await redis.info("commandstats")
    return int(stats.get("cmdstat_hmget", {}).get("calls", 0))


async def test_the_create_call_matches_and_reads_in_one_pass(
    memory: ShortTermWriter, redis: aioredis.Redis
) -> None:
    """Theme matching and the rows' read share one pass over the pair's entries: one HMGET
    an entry (the new one included), and a matched entry's row carries the haeufigkeit the
    matching gave it — what a `field_rows` read after the call returns."""
    for index, name in enumerate(["Anna", "Lena", "Tom"]):
        stored = await memory.store_salience_write(
            PAIR, daten(f"{name} zieht nach Köln.", ["umzug"], [name]), "user"
        )
        assert stored is not None, index
    entries = len(await redis.smembers(short_term_index(PAIR)))
    vector = (await memory.model.embed(["Lena zieht um."]))[0]
    names = ("entitaet_ids", "haeufigkeit")
    before = await _hmget_calls(redis)
    created = await memory.store.create_matching(
        PAIR,
        {"user_id": "meister", "inhalt": "Lena zieht um.", "entitaet_ids": "7"},
        vector,
        ttl_seconds=600,
        epoch_ms=1_790_000_200_000,
        themes=["umzug"],
        rows_of=names,
    )
    assert await _hmget_calls(redis) - before == entries + 1
    assert len(created.matched) == entries
    assert created.rows == await memory.store.field_rows(PAIR, names)
    counts = {key: values[1] for key, values in created.rows}
    assert all(counts[row.key] == str(row.frequency) for row in created.matched)
