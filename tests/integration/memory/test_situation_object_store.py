"""The situation's objects that last: `sachlage_objekt`, `sachlage_objekt_turn`,
`sachlage_eigenschaft` through `memory/situation_objects.py` (real PostgreSQL)."""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from novaberg.memory.situation_objects import ObjectSeen, bound, remember, stored
from novaberg.pair import Pair
from novaberg.store.entities import resolve_entities

PAIR = Pair("meister", "nova")
OTHER = Pair("anna", "nova")


async def values(db: AsyncConnectionPool, name: str) -> list[tuple[str, str, str, str | None]]:
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT e.eigenschaft, e.wert, e.turn_id, e.abgeloest_von_turn"
            " FROM sachlage_eigenschaft e JOIN sachlage_objekt o ON o.id = e.objekt_id"
            " WHERE o.name = %s ORDER BY e.id",
            (name,),
        )
        rows = await cur.fetchall()
    return [(r["eigenschaft"], r["wert"], r["turn_id"], r["abgeloest_von_turn"]) for r in rows]


async def test_a_new_value_supersedes_and_the_old_one_stays_as_history(
    db: AsyncConnectionPool,
) -> None:
    first = await remember(
        db,
        PAIR,
        "t1",
        [ObjectSeen("Fahrrad", {"Farbe": "rot", "marke": "Gazelle"}, ("preis",), acute=True)],
    )
    assert first.new_values == ("Fahrrad.farbe", "Fahrrad.marke") and first.superseded == ()
    second = await remember(
        db, PAIR, "t2", [ObjectSeen("fahrrad", {"farbe": "blau", "Marke": "Gazelle"})]
    )
    # only the changed value is written; the same value again changes nothing
    assert second.new_values == ("fahrrad.farbe",)
    assert second.superseded == ("fahrrad.farbe",)
    assert await values(db, "fahrrad") == [
        ("farbe", "rot", "t1", "t2"),
        ("marke", "Gazelle", "t1", None),
        ("farbe", "blau", "t2", None),
    ]
    (current,) = await stored(db, PAIR, 5)
    assert dict(current.properties) == {"marke": "Gazelle", "farbe": "blau"}
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT t.turn_id, t.akut, t.offen FROM sachlage_objekt_turn t ORDER BY t.turn_id"
        )
        links = [(r["turn_id"], r["akut"], r["offen"]) for r in await cur.fetchall()]
    assert links == [("t1", True, ["preis"]), ("t2", False, [])]
    assert await stored(db, OTHER, 5) == []


async def test_objects_bind_to_the_pairs_entities_once(db: AsyncConnectionPool) -> None:
    known = await resolve_entities(db, PAIR, ["Anna Berg", "Köln"])
    anna, _ = known.ids
    first = await remember(db, PAIR, "t1", [ObjectSeen("Anna"), ObjectSeen("Kaffeemaschine")])
    by_name = {obj.name: obj.entity_id for obj in first.objects}
    assert by_name["Anna"] == anna  # a whole-word part of one known entity
    assert by_name["Kaffeemaschine"] not in (None, anna)  # a new entity of the pair
    assert first.newly_bound == ("Anna", "Kaffeemaschine")
    again = await remember(db, PAIR, "t2", [ObjectSeen("Anna")])
    assert again.newly_bound == () and again.objects[0].entity_id == anna
    (found,) = await bound(db, PAIR, ["anna"])
    assert (found.entity_id, found.entity_name) == (anna, "Anna Berg")


async def test_an_ambiguous_name_stays_unbound(db: AsyncConnectionPool) -> None:
    await resolve_entities(db, PAIR, ["Anna Berg", "Anna Schmidt"])
    result = await remember(db, PAIR, "t1", [ObjectSeen("Anna")])
    assert result.objects[0].entity_id is None and result.ambiguous == ("Anna",)
