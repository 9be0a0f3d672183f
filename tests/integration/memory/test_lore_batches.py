"""A card's lorebook is embedded and written in batches, each in its own short transaction,
with no pool connection held while a batch is embedded; an import that fails halfway is
completed by the same import again, and a re-import embeds nothing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from psycopg_pool import AsyncConnectionPool

from novaberg.imports.card_import import LORE_BATCH, import_card
from novaberg.imports.cards import parse_card
from novaberg.llm.errors import ModelUnavailable
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder
from novaberg.pair import Pair
from novaberg.store import long_term_nodes
from novaberg.store.long_term_nodes import NewNode

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def lorebook(entries: int) -> dict:
    lore = [
        {"keys": [f"Ort {i}"], "content": f"Am Ort {i} steht ein Leuchtturm.", "id": i}
        for i in range(entries)
    ]
    return {"spec": "chara_card_v2", "data": {"name": "Käthe", "character_book": {"entries": lore}}}


class WatchingEmbedder(ScriptedEmbedder):
    """Records each call's size and how many of the pool's connections were out meanwhile;
    fails once `budget` calls are spent."""

    def __init__(self, pool: AsyncConnectionPool, budget: int | None = None) -> None:
        super().__init__(384)
        self.pool = pool
        self.budget = budget
        self.calls: list[tuple[int, int]] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.budget is not None and len(self.calls) >= self.budget:
            raise ModelUnavailable("embedding server gone")
        stats = self.pool.get_stats()
        self.calls.append((len(texts), stats["pool_size"] - stats["pool_available"]))
        return await super().embed(texts)


async def lore_count(db: AsyncConnectionPool) -> int:
    async with db.connection() as conn:
        row = await (await conn.execute("SELECT count(*) AS n FROM lzg_knoten")).fetchone()
        return int(row["n"])


async def test_a_2000_entry_lorebook_is_written_in_batches_holding_no_connection_meanwhile(
    db: AsyncConnectionPool, model: ModelLayer, pg_trips
) -> None:  # type: ignore[no-untyped-def]
    embedder = WatchingEmbedder(db)
    card = parse_card(lorebook(2000))
    report = await import_card(db, ModelLayer(model.text, embedder), card, user_id="anna", now=NOW)
    checkouts, trips = pg_trips.checkouts, len(pg_trips.trips)
    assert (report.lore_new, report.lore_total) == (2000, 2000)
    assert await lore_count(db) == 2000
    batches = -(-2000 // LORE_BATCH)
    assert [size for size, _ in embedder.calls] == [LORE_BATCH] * (batches - 1) + [
        2000 - LORE_BATCH * (batches - 1)
    ]
    assert {held for _, held in embedder.calls} == {0}, "a connection was held while embedding"
    assert checkouts == 1 + 2 * batches, "the character, then per batch: check, write"
    assert trips < 5 * batches, "batches, not a statement per entry"

    again = await import_card(db, ModelLayer(model.text, embedder), card, user_id="anna", now=NOW)
    assert (again.created, again.lore_new) == (False, 0)
    assert len(embedder.calls) == batches, "what is stored is not embedded again"


async def test_an_import_that_failed_halfway_is_completed_by_the_next(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    card = parse_card(lorebook(1000))
    broken = ModelLayer(model.text, WatchingEmbedder(db, budget=3))
    with pytest.raises(ModelUnavailable):
        await import_card(db, broken, card, user_id="anna", now=NOW)
    assert await lore_count(db) == 3 * LORE_BATCH, "the batches before the failure stay"
    whole = ModelLayer(model.text, WatchingEmbedder(db))
    report = await import_card(db, whole, card, user_id="anna", now=NOW)
    assert (report.created, report.lore_new, report.lore_total) == (
        False,
        1000 - 3 * LORE_BATCH,
        1000,
    )
    assert await lore_count(db) == 1000
    async with db.connection() as conn:
        keys = await (
            await conn.execute("SELECT kzg_quell_key FROM lzg_knoten ORDER BY id")
        ).fetchall()
    assert [k["kzg_quell_key"] for k in keys] == [f"karte:anna:kaethe:{i}" for i in range(1000)]


async def test_lore_the_person_deleted_is_not_imported_again(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    card = parse_card(lorebook(300))
    await import_card(db, model, card, user_id="anna", now=NOW)
    async with db.connection() as conn, conn.transaction():
        row = await (
            await conn.execute("SELECT id FROM lzg_knoten WHERE kzg_quell_key LIKE '%:7'")
        ).fetchone()
        assert (
            await long_term_nodes.delete_node(conn, Pair("anna", "kaethe"), row["id"]) is not None
        )
    again = await import_card(db, model, card, user_id="anna", now=NOW)
    assert again.lore_new == 0
    assert await lore_count(db) == 299


async def test_insert_nodes_skips_stored_and_tombstoned_keys_in_batch_order(
    db: AsyncConnectionPool,
) -> None:
    def node(key: str) -> NewNode:
        return NewNode(
            source_key=key, user_id="anna", character_id="nova", observer="user",
            text=f"Notiz {key}", embedding=[1.0] + [0.0] * 383, dimension="kontext",
            raw_weight=0.5, absolute_weight=0.5, decayed_weight=0.5, frequency=1,
            created_at=NOW, reinforced_at=NOW, themes=["x"], memory_type="lang",
        )  # fmt: skip

    async with db.connection() as conn:
        await conn.execute(
            "INSERT INTO lzg_geloescht (kzg_key, lzg_id, user_id, character_id)"
            " VALUES ('weg', 1, 'anna', 'nova')"
        )
        (first,) = await long_term_nodes.insert_nodes(conn, [node("a")])
        ids = await long_term_nodes.insert_nodes(
            conn, [node("c"), node("a"), node("weg"), node("b")]
        )
    assert first is not None and ids[1] is None and ids[2] is None
    assert ids[0] is not None and ids[3] is not None and first < ids[0] < ids[3]
