"""The conversation archive and the hybrid search over it, against the real PostgreSQL and
Redis (scripted embedder: hashed bag of words, so only words and their stems connect)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import numpy as np
import psycopg
import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from typer.testing import CliRunner

from app_client import signed_in_client
from novaberg.cli import app as cli_app
from novaberg.config import Settings
from novaberg.imports.chat_formats import parse_chat
from novaberg.imports.chat_import import import_chat
from novaberg.llm.layer import ModelLayer
from novaberg.memory.archive import archive_live_turn, purge_expired
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import SearchOptions
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import archive, keys, long_term_search
from novaberg.store.archive import stored_vector
from novaberg.store.short_term import encode_vector

PAIR = Pair("meister", "nova")
OTHER = Pair("meister", "kaethe")
TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 5, 14, 12, 0, tzinfo=UTC)

FACT = "Mein Nachbar heißt übrigens Korbinian Wegscheider."
DISTRACTORS = [
    "Der Nachbar von gegenüber hat heute wieder gebohrt.",
    "Wie heißt noch mal der Film mit dem Hai?",
    "Unser Nachbar gießt im Urlaub die Blumen.",
    "Meine Schwester heißt Ottilie und wohnt in Köln.",
    "Die Nachbarskinder spielen jeden Tag Fußball.",
    "Heute war ein langer Tag im Büro.",
]


def _line(ident: str, text: str, when: datetime, speaker: str = "user") -> dict[str, Any]:
    return {"id": ident, "speaker": speaker, "text": text, "time": when.isoformat()}


def chat_file(lines: list[dict[str, Any]]) -> bytes:
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode()


async def store_chat(db: AsyncConnectionPool, model: ModelLayer, pair: Pair, data: bytes) -> Any:
    return await import_chat(db, model, pair, parse_chat(data, tz=TZ, name="test.jsonl"))


def sample_lines() -> list[dict[str, Any]]:
    start = datetime(2026, 1, 5, 18, 0, tzinfo=UTC)
    lines = [_line(f"d{i}", text, start + timedelta(days=i)) for i, text in enumerate(DISTRACTORS)]
    lines.insert(3, _line("fact", FACT, datetime(2026, 3, 10, 19, 0, tzinfo=UTC)))
    lines.append(
        _line("car", "Im März war das Auto in der Werkstatt.", datetime(2026, 3, 20, tzinfo=UTC))
    )
    lines.append(
        _line("car2", "Das Auto springt wieder nicht an.", datetime(2026, 4, 20, tzinfo=UTC))
    )
    return lines


async def search(
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    query: str,
    pair: Pair = PAIR,
    **options: Any,
):  # type: ignore[no-untyped-def]
    return await search_memory(
        redis, db, model, pair, query, now=NOW, tz=TZ, options=SearchOptions(**options)
    )


async def _recount(db: AsyncConnectionPool) -> tuple[dict, dict]:
    async with db.connection() as conn:
        stored = await conn.execute("SELECT user_id, character_id, lexem, df FROM archiv_lexeme")
        lexemes = {
            (r["user_id"], r["character_id"], r["lexem"]): r["df"] for r in await stored.fetchall()
        }
        counted = await conn.execute(
            "SELECT user_id, character_id, l AS lexem, count(*) AS df FROM gespraechsarchiv,"
            " unnest(tsvector_to_array(tsv)) AS l GROUP BY 1, 2, 3"
        )
        recount = {
            (r["user_id"], r["character_id"], r["lexem"]): r["df"] for r in await counted.fetchall()
        }
    return lexemes, recount


async def test_archive_writes_are_idempotent_and_its_statistics_follow_the_rows(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    data = chat_file(sample_lines())
    first = await store_chat(db, model, PAIR, data)
    again = await store_chat(db, model, PAIR, data)
    assert (first.new, first.existing) == (9, 0)
    assert (again.new, again.existing) == (0, 9), "re-importing the same file adds nothing"
    await store_chat(db, model, OTHER, data)
    lexemes, recount = await _recount(db)
    assert lexemes == recount and lexemes[("meister", "nova", "korbinian")] == 1
    async with db.connection() as conn:
        pair_row = await (
            await conn.execute(
                "SELECT anzahl FROM archiv_paar WHERE user_id = 'meister' AND character_id = 'nova'"
            )
        ).fetchone()
        assert pair_row["anzahl"] == 9
        with pytest.raises(psycopg.errors.RaiseException, match="never change"):
            await conn.execute(
                "UPDATE gespraechsarchiv SET inhalt = 'anders' WHERE quell_id = 'fact'"
            )
        ids = [
            r["id"]
            for r in await (
                await conn.execute(
                    "SELECT id FROM gespraechsarchiv WHERE user_id = 'meister' AND character_id = 'nova'"
                    " AND quell_id IN ('fact', 'car')"
                )
            ).fetchall()
        ]
        assert await archive.set_pinned(conn, PAIR, ids, True) == 2
        await conn.execute(
            "UPDATE gespraechsarchiv SET archiviert_am = now() - interval '400 days'"
        )
    purged = await purge_expired(db, datetime.now(UTC).timestamp())
    assert purged == 16, "a year after archiving, every unpinned row of both pairs goes"
    lexemes, recount = await _recount(db)
    assert lexemes == recount, "the statistics follow deletions too"
    assert set(lexemes) >= {("meister", "nova", "korbinian")}
    assert ("meister", "kaethe", "korbinian") not in lexemes


async def test_a_live_row_gets_its_context_view_from_the_row_before(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    common = {"message_ids": ["m1"], "origin": "user"}
    first = await archive_live_turn(
        db,
        model,
        PAIR,
        speaker="character",
        text="Wie heißt eigentlich dein Hund?",
        time=NOW,
        turn_id="t1",
        **common,
    )
    second = await archive_live_turn(
        db,
        model,
        PAIR,
        speaker="user",
        text="Bello.",
        time=NOW + timedelta(minutes=1),
        turn_id="t2",
        **common,
    )
    repeat = await archive_live_turn(
        db,
        model,
        PAIR,
        speaker="user",
        text="Bello.",
        time=NOW + timedelta(minutes=1),
        turn_id="t2",
        **common,
    )
    assert first and second and repeat is None, "a re-run turn is archived once"
    async with db.connection() as conn:
        rows = {
            r["id"]: r
            for r in await (
                await conn.execute(
                    "SELECT id, embedding, embedding_kontext, quell_id, sprache::text AS sprache"
                    " FROM gespraechsarchiv"
                )
            ).fetchall()
        }
    assert rows[first]["embedding_kontext"] is None and rows[first]["sprache"] == "german"
    assert rows[second]["quell_id"] == "t2:user:0"
    assert rows[second]["sprache"] == "german", "too short to tell: the row before's language"
    expected = stored_vector(rows[first]["embedding"]) + stored_vector(rows[second]["embedding"])
    expected /= np.linalg.norm(expected)
    assert np.allclose(stored_vector(rows[second]["embedding_kontext"]), expected, atol=1e-5)
    found = await search(None, db, model, "Wie heißt mein Hund?", layers=frozenset({"archiv"}))  # type: ignore[arg-type]
    bello = next(h for h in found.hits if h.text == "Bello.")
    assert "vektor_kontext" in bello.signals and "vektor" not in bello.signals, (
        "the short answer is found only through its question"
    )


async def test_words_stems_and_rare_names_find_the_fact_among_distractors(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await store_chat(db, model, PAIR, chat_file(sample_lines()))
    by_name = await search(redis, db, model, "Korbinian")
    assert by_name.hits[0].text == FACT
    assert by_name.hits[0].sources[0].source_id == "fact"
    assert by_name.hits[0].sources[0].turn_id == "import:jsonl:fact"
    inflected = await search(redis, db, model, "Blume")  # no row has this form: "Blumen"
    assert [(h.text, set(h.signals)) for h in inflected.hits] == [
        (DISTRACTORS[2], {"lexikalisch"}),
        (DISTRACTORS[3], {"lexikalisch"}),  # the turn after it, by its predecessor's words
    ], "found through the German stem, not the hashed vector"
    first, after = (h.signals["lexikalisch"][1] for h in inflected.hits)
    assert after == pytest.approx(first / 2)
    past = await search(redis, db, model, "spielte")  # the stemmer keeps "spielt" ≠ "spiel"
    assert [(h.text, set(h.signals)) for h in past.hits] == [(DISTRACTORS[4], {"trigramm"})]
    typo = await search(redis, db, model, "Korbinain")
    assert typo.hits[0].text == FACT and "trigramm" in typo.hits[0].signals
    vectors_only = await search(redis, db, model, "Blume", methods=frozenset({"vektor"}))
    assert vectors_only.hits == [], "the hashed vectors know no stems"


async def test_a_search_runs_on_one_connection_in_few_round_trips(
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every list of every layer from one pooled connection, in one round trip however
    many lists there are (`store/pipelined.py`): the query's terms, the lists, the
    long-term pair size (not yet remembered), the corrected name's list, the details."""
    await store_chat(db, model, PAIR, chat_file(sample_lines()))
    long_term_search.forget_pair_sizes()
    checkouts: list[int] = []
    trips: list[str] = []
    connection = db.connection
    wait = psycopg.AsyncConnection.wait

    def counted(*args: Any, **kwargs: Any) -> Any:
        checkouts.append(1)
        return connection(*args, **kwargs)

    async def waiting(self: psycopg.AsyncConnection, gen: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(gen, "__name__", "")
        # what waits for the server's answer: a pipeline's end or a read inside it, or a
        # statement outside a pipeline
        if name in ("_exit_gen", "_fetch_gen", "_sync_gen") or (
            name == "_execute_gen" and self._pipeline is None
        ):
            trips.append(name)
        return await wait(self, gen, *args, **kwargs)

    monkeypatch.setattr(db, "connection", counted)
    monkeypatch.setattr(psycopg.AsyncConnection, "wait", waiting)
    typo = await search(redis, db, model, "Korbinain Nachbar")
    assert typo.hits[0].text == FACT and "trigramm" in typo.hits[0].signals
    assert "lexikalisch" in typo.hits[0].signals
    assert len(checkouts) == 1
    assert len(trips) == 5, trips


async def test_a_time_expression_narrows_every_hit_to_its_window(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await store_chat(db, model, PAIR, chat_file(sample_lines()))
    result = await search(redis, db, model, "Was war im März mit dem Auto?")
    assert result.window is not None and result.window.kind == "monat"
    assert result.window.start == datetime(2026, 3, 1, tzinfo=TZ)
    assert {h.text for h in result.hits} == {FACT, "Im März war das Auto in der Werkstatt."}
    assert result.hits[0].text.startswith("Im März"), "the window's turn that also matches"
    unnarrowed = await search(
        redis, db, model, "Was war im März mit dem Auto?", narrow_by_time=False
    )
    assert "Das Auto springt wieder nicht an." in {h.text for h in unnarrowed.hits}


async def test_a_window_without_matches_answers_with_its_newest_turns(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await store_chat(db, model, PAIR, chat_file(sample_lines()))
    result = await search(redis, db, model, "Was habe ich im April so gemacht?")
    assert result.window is not None and result.window.start == datetime(2026, 4, 1, tzinfo=TZ)
    assert [(h.text, set(h.signals)) for h in result.hits] == [
        ("Das Auto springt wieder nicht an.", {"zeitraum"})
    ], "the only turn of April, though no word or vector matches"
    assert result.hits[0].score == 0.0


async def test_short_and_long_term_hits_name_the_turns_they_rest_on(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await archive_live_turn(
        db,
        model,
        PAIR,
        speaker="user",
        text="Ich segle am liebsten auf dem Gardasee.",
        time=NOW - timedelta(days=40),
        turn_id="t-segeln",
        message_ids=["n-1", "n-2"],
        origin="user",
    )
    kern = "Der Nutzer segelt gern auf dem Gardasee."
    vector = (await model.embed([kern]))[0]
    await redis.hset(
        keys.short_term_entry(PAIR, 5),
        mapping={
            "inhalt": kern,
            "salienz": "0.8",
            "beobachter": "user",
            "turn_id": "t-segeln",
            "erstellt_am": repr((NOW - timedelta(days=40)).timestamp()),
            "embedding": encode_vector(vector),
        },
    )
    await redis.sadd(keys.short_term_index(PAIR), keys.short_term_entry(PAIR, 5))
    async with db.connection() as conn:
        node = await (
            await conn.execute(
                "INSERT INTO lzg_knoten (kzg_quell_key, user_id, character_id, inhalt, embedding,"
                " gewicht_roh, gewicht_absolut, gewicht_decay, sprache) VALUES"
                " ('kzg:meister:nova:1', 'meister', 'nova', 'Segeln auf dem Gardasee ist ihr Glück.',"
                " %s, 1, 3, 3, 'german') RETURNING id",
                (np.asarray((await model.embed(["Segeln Gardasee Glück"]))[0], dtype=np.float32),),
            )
        ).fetchone()
        await conn.execute(
            "INSERT INTO lzg_befoerderung (kzg_key, lzg_id, aktion) VALUES (%s, %s, 'verstaerkt')",
            (keys.short_term_entry(PAIR, 5), node["id"]),
        )
        await conn.execute(
            "INSERT INTO verbindung (turn_id, kzg_id) VALUES ('t-segeln', %s)",
            (keys.short_term_entry(PAIR, 5),),
        )
    result = await search(redis, db, model, "Gardasee segeln")
    layers = {h.layer: h for h in result.hits}
    assert set(layers) == {"archiv", "kzg", "lzg"}
    short = layers["kzg"]
    assert [(s.layer, s.id) for s in short.sources] == [
        ("kzg", keys.short_term_entry(PAIR, 5)),
        ("archiv", layers["archiv"].id),
    ]
    assert short.sources[1].message_ids == ("n-1", "n-2") and short.sources[1].turn_id == "t-segeln"
    long_sources = [(s.layer, s.id) for s in layers["lzg"].sources]
    assert long_sources[0] == ("lzg", str(node["id"]))
    assert ("kzg", "kzg:meister:nova:1") in long_sources and (
        "kzg",
        keys.short_term_entry(PAIR, 5),
    ) in long_sources
    assert ("archiv", layers["archiv"].id) in long_sources, "through the reinforcing key's turn"
    assert all(h.time is not None for h in result.hits)


async def test_each_pair_finds_only_its_own_memories(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await store_chat(db, model, PAIR, chat_file([_line("1", FACT, NOW)]))
    await store_chat(db, model, OTHER, chat_file([_line("1", "Korbinian ist mein Bruder.", NOW)]))
    nova = await search(redis, db, model, "Korbinian")
    kaethe = await search(redis, db, model, "Korbinian", pair=OTHER)
    assert [h.text for h in nova.hits] == [FACT]
    assert [h.text for h in kaethe.hits] == ["Korbinian ist mein Bruder."]


@pytest.fixture
async def client(
    settings: Settings,
    endpoints: Endpoints,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in_client(
        settings, endpoints, redis, db, model, user="meister", gate="scripted-search"
    ) as http:
        yield http


async def test_the_endpoint_answers_the_objects_the_cli_prints(
    client: httpx.AsyncClient,
    db: AsyncConnectionPool,
    model: ModelLayer,
    endpoints: Endpoints,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await store_chat(db, model, PAIR, chat_file(sample_lines()))
    response = await client.get(
        "/memory/nova/search", params={"q": "Korbinian Nachbar", "limit": 3}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["zeitfenster"] is None and body["vektor"] is True
    hits = body["hits"]
    assert len(hits) == 3 and hits[0]["text"] == FACT
    assert set(hits[0]) >= {"layer", "score", "text", "sources", "time"}
    assert hits[0]["sources"][0]["source_id"] == "fact"
    for name, value in {
        "NOVABERG_HOME": str(tmp_path),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
    }.items():
        monkeypatch.setenv(name, value)
    printed = await asyncio.to_thread(  # the CLI runs its own event loop
        CliRunner().invoke,
        cli_app,
        ["memory", "search", "--json", "--limit", "3", "Korbinian Nachbar"],
    )
    assert printed.exit_code == 0, printed.output
    assert [json.loads(line) for line in printed.stdout.splitlines()] == hits
    other = await client.get("/memory/kaethe/search", params={"q": "Korbinian"})
    assert other.status_code == 200 and other.json()["hits"] == []
    assert (await client.get("/memory/nova/search", params={"q": ""})).status_code == 422
    assert (
        await client.get("/memory/nova/search", params={"q": "x"}, headers={"Authorization": ""})
    ).status_code == 401


async def test_a_window_fill_is_read_with_the_lists(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer, pg_trips: Any
) -> None:
    """The window's newest turns go out with the lists: no round trip of their own."""
    await store_chat(db, model, PAIR, chat_file(sample_lines()))
    await search(redis, db, model, "Was habe ich im April so gemacht?")  # pair size read
    pg_trips.checkouts, pg_trips.trips = 0, []
    result = await search(redis, db, model, "Was habe ich im April so gemacht?")
    assert [(h.text, set(h.signals)) for h in result.hits] == [
        ("Das Auto springt wieder nicht an.", {"zeitraum"})
    ]
    # the terms, the lists with the window's newest turns, the details
    assert pg_trips.checkouts == 1 and len(pg_trips.trips) == 3, pg_trips.trips


async def test_one_search_finds_a_library_passage_beside_the_archive(
    client: httpx.AsyncClient,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    tmp_path: Path,
) -> None:
    """The person's approved folders are a layer of the one search: a passage comes back
    with `layer: "library"` and a source naming its file, heading and lines, fused with
    the archive's hits; every character of hers finds it, another person does not."""
    from novaberg.memory.library.indexer import LibraryLimits, index_root
    from novaberg.memory.library.roots import approve, checked_folder

    await store_chat(db, model, PAIR, chat_file(sample_lines()))
    notes = tmp_path / "Notizen"
    notes.mkdir()
    (notes / "nachbarn.md").write_text(
        "# Haus\n\n## Nachbarn\n\nKorbinian Wegscheider hat den Ersatzschluessel fuer den Keller.\n"
    )
    limits = LibraryLimits(1024 * 1024, 100, 10_000)
    await index_root(db, model, await approve(db, "meister", checked_folder(notes, limits)), limits)

    result = await search(redis, db, model, "Korbinian Ersatzschluessel")
    layers = [hit.layer for hit in result.hits]
    print([hit.as_json(rank) for rank, hit in enumerate(result.hits, start=1)][:2])
    assert "library" in layers and "archiv" in layers, layers
    passage = result.hits[layers.index("library")]
    assert "Ersatzschluessel" in passage.text
    (source,) = [s.as_json() for s in passage.sources]
    assert source == {
        "layer": "library",
        "id": passage.id,
        "file": str(notes.resolve() / "nachbarn.md"),
        "page": None,
        "heading": "Haus › Nachbarn",
        "lines": [5, 5],
    }
    assert set(passage.signals) == {"lexikalisch", "vektor"}
    assert result.hits[layers.index("archiv")].text == FACT

    only_memory = await search(
        redis, db, model, "Korbinian Ersatzschluessel", layers=frozenset({"archiv"})
    )
    assert "library" not in [hit.layer for hit in only_memory.hits]

    response = await client.get("/memory/kaethe/search", params={"q": "Ersatzschluessel Keller"})
    assert response.status_code == 200, response.text
    (hit,) = [h for h in response.json()["hits"] if h["layer"] == "library"]
    assert hit["sources"][0]["file"].endswith("nachbarn.md")
    stranger = await search(redis, db, model, "Ersatzschluessel", pair=Pair("jemand", "nova"))
    assert stranger.hits == [], "one person's library is not another's"
