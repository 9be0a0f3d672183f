"""The page's read endpoints: history paged backwards for the caller's pair only, and the
settings panel's facts (model, demo banner, time zone, wheel, message limit), and refusals
in words (`meldung`) next to the machine code."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from app_client import signed_in_client
from novaberg.api.error_sentences import (
    FAILURE_FALLBACK,
    FAILURES,
    SENTENCES,
    SENTENCES_EN,
    failure_sentence,
)
from novaberg.api.page_api import page_settings
from novaberg.config import Settings, load_settings
from novaberg.events import outcomes
from novaberg.events.model import MAX_PROMPT_BYTES
from novaberg.llm.layer import ModelLayer
from novaberg.runtime.services import Endpoints
from novaberg.store.failed_turns import FailedTurnLog
from novaberg.store.pipeline_log import KIND_RAW_TURN, PipelineLog, purge_pipeline_log


@pytest.fixture
async def client(
    settings: Settings,
    endpoints: Endpoints,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in_client(
        settings, endpoints, redis, db, model, user="leser", gate="scripted-page", local_page=False
    ) as http:
        yield http


def _raw_turn(log: PipelineLog, user: str, prompt: str, answer: str, origin: str) -> None:
    log.add(
        source="character",
        node="dispatcher",
        kind=KIND_RAW_TURN,
        turn_id=f"t-{prompt}",
        content={
            "user_prompt": prompt,
            "response": answer,
            "user_emotion": {"emotion": "freude", "arousal": 0.7},
            "nova_emotion": {"emotion": "neugierig", "arousal": 0.4},
            "herkunft": origin,
        },
        user_id=user,
        character_id="nova",
    )


async def test_history_pages_backwards_for_the_callers_pair(
    client: httpx.AsyncClient, db: AsyncConnectionPool
) -> None:
    log = PipelineLog(db)
    _raw_turn(log, "leser", "eins", "Antwort eins", "nutzer_turn")
    _raw_turn(log, "fremder", "fremd", "nicht deins", "nutzer_turn")
    _raw_turn(log, "leser", "zwei", "Antwort zwei", "nutzer_turn")
    _raw_turn(log, "leser", "Gedanke", "Mir fiel etwas ein", "eigener_impuls")
    log.add(source="human", node="perception", kind="node", turn_id="t-x", user_id="leser")
    await log.close()

    first = (await client.get("/history/nova", params={"limit": 2})).json()
    assert [e["nachricht"] for e in first["eintraege"]] == ["Antwort zwei", "Mir fiel etwas ein"]
    assert first["weitere"] is True
    newest = first["eintraege"][-1]
    assert newest["reiz_herkunft"] == "eigener_impuls" and newest["eingabe"] == "Gedanke"
    assert (newest["emotion"], newest["arousal"]) == ("neugierig", 0.4)
    assert (newest["user_emotion"], newest["user_arousal"]) == ("freude", 0.7)
    assert newest["zeit"] > 1.7e9 and newest["turn_id"] == "t-Gedanke"

    older = await client.get(
        "/history/nova", params={"limit": 2, "vor": first["eintraege"][0]["id"]}
    )
    page = older.json()
    assert [e["eingabe"] for e in page["eintraege"]] == ["eins"] and page["weitere"] is False
    assert (await client.get("/history/luna")).json() == {"eintraege": [], "weitere": False}
    assert (await client.get("/history/nova", params={"vor": 0})).status_code == 422


async def test_page_settings(client: httpx.AsyncClient) -> None:
    shown = (await client.get("/page/settings")).json()
    assert shown["backend"] == "scripted" and shown["demo_modell"] is False
    assert shown["emotionsrad"]["freude"] == 1 and shown["emotionsrad"]["wut"] == 7
    assert shown["sektoren"] == 8 and shown["zeitzone"]
    assert (await client.get("/page/settings", headers={"Authorization": ""})).status_code == 401


def test_the_bundled_model_is_called_a_demo(tmp_path: Path) -> None:
    bundled = page_settings(load_settings(home=tmp_path, llm="local"))
    assert bundled.demo_modell is True and bundled.modell == "SmolLM2-135M-Instruct"
    assert "NOVABERG_LLM_URL=" in bundled.demo_hinweis
    own = page_settings(load_settings(home=tmp_path, llm="local", local_model_path="/m/q.gguf"))
    assert own.demo_modell is False and own.modell == "q.gguf"
    remote = page_settings(
        load_settings(home=tmp_path, llm_url="http://x/v1", llm_model_chat="qwen", timezone="UTC")
    )
    assert (remote.demo_modell, remote.modell, remote.zeitzone) == (False, "qwen", "UTC")


async def test_a_failed_turn_is_part_of_the_history(
    client: httpx.AsyncClient, db: AsyncConnectionPool
) -> None:
    log = PipelineLog(db)
    _raw_turn(log, "leser", "eins", "Antwort eins", "nutzer_turn")
    await log.close()
    failures = FailedTurnLog(db)
    await failures.record("leser", "nova", "t-kaputt", ["m1", "m2"], "modell_timeout", ["a", "b"])
    await failures.record("fremder", "nova", "t-fremd", ["m3"], "modell_timeout", ["fremd"])
    page = (await client.get("/history/nova")).json()
    assert [e["gescheitert"] for e in page["eintraege"]] == [False, True]
    failed = page["eintraege"][1]
    assert (failed["turn_id"], failed["grund"], failed["eingaben"]) == (
        "t-kaputt",
        "modell_timeout",
        ["a", "b"],
    )
    assert failed["eingabe"] == "a\nb" and failed["nachricht"] == ""
    assert page["eintraege"][0]["grund"] is None and page["eintraege"][0]["eingaben"] == []
    async with db.connection() as conn:
        old = datetime.now(UTC) + timedelta(days=1)
        await purge_pipeline_log(conn, old)
    kept = (await client.get("/history/nova")).json()["eintraege"]
    assert len(kept) == 2, "the purge keeps answered and failed turns"


async def test_an_imported_cards_picture_is_served_with_a_token(
    client: httpx.AsyncClient, card_png: Any
) -> None:
    card = {"spec": "chara_card_v2", "data": {"name": "Bildprobe", "description": "x"}}
    made = await client.post(
        "/characters", content=card_png(card), headers={"Content-Type": "image/png"}
    )
    assert made.status_code == 201 and made.json()["avatar"] is True, made.text
    listed = (await client.get("/characters")).json()["characters"]
    assert {c["character_id"]: c["avatar"] for c in listed} == {"bildprobe": True, "nova": False}
    shown = await client.get("/characters/bildprobe/avatar")
    assert shown.status_code == 200 and shown.headers["content-type"] == "image/png"
    assert shown.headers["x-content-type-options"] == "nosniff"
    assert shown.content.startswith(b"\x89PNG") and b"chara" not in shown.content
    none = await client.get("/characters/nova/avatar")
    assert none.status_code == 404 and none.json()["detail"]["fehler"] == "kein_avatar"
    bare = await client.get("/characters/bildprobe/avatar", headers={"Authorization": ""})
    assert bare.status_code == 401
    json_card = await client.post("/characters", json={**card, "data": {"name": "Ohnebild"}})
    assert json_card.json()["avatar"] is False


async def test_the_limit_is_in_the_page_settings(client: httpx.AsyncClient) -> None:
    shown = (await client.get("/page/settings")).json()
    assert shown["text_max_bytes"] == MAX_PROMPT_BYTES == 16 * 1024


async def test_a_too_long_message_is_refused_in_words(client: httpx.AsyncClient) -> None:
    over = await client.post("/chat", json={"character_id": "nova", "text": "a" * 20_000})
    huge = await client.post("/chat", json={"character_id": "nova", "text": "a" * 2_000_000})
    for refused in (over, huge):
        body = refused.json()
        print(refused.status_code, body)
        assert refused.status_code == 413 and body["fehler"] == "text_zu_lang"
        assert body["meldung"] == (
            "Die Nachricht ist zu lang: höchstens 16 KiB (16.384 Bytes) gehen auf einmal. "
            "Kürze sie oder teile sie auf."
        )
        assert "bytes" not in body["meldung"]


async def test_a_wrong_key_is_refused_in_words(client: httpx.AsyncClient) -> None:
    bad = {"Authorization": "Bearer nvb_falsch"}
    posted = await client.post("/chat", json={"character_id": "nova", "text": "hi"}, headers=bad)
    read = await client.get("/page/settings", headers=bad)
    assert posted.status_code == read.status_code == 401
    assert posted.json()["fehler"] == read.json()["detail"]["fehler"] == "token_ungueltig"
    sentence = posted.json()["meldung"]
    assert sentence == read.json()["detail"]["meldung"] == SENTENCES["token_ungueltig"]
    assert sentence.startswith("Der Schlüssel wurde nicht angenommen.")


def test_every_sentence_is_a_sentence() -> None:
    for code, sentence in SENTENCES.items():
        assert sentence[0].isupper() and sentence.endswith("."), code
        assert "_" not in sentence and "`" not in sentence, code


ENGLISH = {"Accept-Language": "en-GB,en;q=0.9,de;q=0.5"}


async def test_sentences_follow_the_requests_language(client: httpx.AsyncClient) -> None:
    over = await client.post(
        "/chat", json={"character_id": "nova", "text": "a" * 20_000}, headers=ENGLISH
    )
    huge = await client.post(
        "/chat", json={"character_id": "nova", "text": "a" * 2_000_000}, headers=ENGLISH
    )
    for refused in (over, huge):
        assert refused.status_code == 413
        assert refused.json()["meldung"] == SENTENCES_EN["text_zu_lang"]
        assert "exceeds" not in refused.json()["meldung"]
    bad = {**ENGLISH, "Authorization": "Bearer nvb_falsch"}
    posted = await client.post("/chat", json={"character_id": "nova", "text": "hi"}, headers=bad)
    read = await client.get("/page/settings", headers=bad)
    assert posted.json()["meldung"] == read.json()["detail"]["meldung"]
    assert posted.json()["meldung"].startswith("The key was not accepted.")
    # no header: German; a language we do not have: German
    plain = await client.get("/page/settings", headers={"Authorization": "Bearer nvb_falsch"})
    french = await client.get(
        "/page/settings", headers={"Authorization": "Bearer nvb_x", "Accept-Language": "fr"}
    )
    assert plain.json()["detail"]["meldung"] == french.json()["detail"]["meldung"]
    assert plain.json()["detail"]["meldung"] == SENTENCES["token_ungueltig"]


async def test_the_request_guards_refusals_are_sentences(client: httpx.AsyncClient) -> None:
    """The guard refuses before any route runs (a body over 1 MiB); its answer is in words
    too, in the request's language."""
    big = b'{"x": "' + b"a" * 1_100_000 + b'"}'
    german = await client.patch(
        "/settings", content=big, headers={"Content-Type": "application/json"}
    )
    english = await client.patch(
        "/settings", content=big, headers={**ENGLISH, "Content-Type": "application/json"}
    )
    assert german.status_code == english.status_code == 413
    assert german.json()["detail"]["meldung"] == SENTENCES["zu_gross"]
    assert english.json()["detail"]["meldung"] == SENTENCES_EN["zu_gross"]


def test_both_languages_say_every_code() -> None:
    assert SENTENCES.keys() == SENTENCES_EN.keys()
    for code, sentence in SENTENCES_EN.items():
        assert sentence[0].isupper() and sentence.endswith("."), code
        assert "_" not in sentence and "`" not in sentence, code


def test_every_failure_reason_is_a_sentence() -> None:
    codes = [v for k, v in vars(outcomes).items() if k.isupper() and isinstance(v, str)]
    codes = [c for c in codes if c.islower() and " " not in c and c != outcomes.__name__]
    assert outcomes.MODEL_TIMEOUT in codes and outcomes.PAUSED in codes
    for code in codes:
        said = failure_sentence(f"{code} (nach responder)")
        assert said in FAILURES.values() and code not in said, code
    assert failure_sentence("fehler_im_knoten: KeyError (router)") == FAILURES["fehler_im_knoten"]
    assert failure_sentence("ganz_neu") == FAILURE_FALLBACK
