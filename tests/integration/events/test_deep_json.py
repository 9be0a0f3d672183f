"""JSON nested thousands of levels deep - with or without a lone surrogate beside it - is a
400 `zu_tief` with a sentence on every route that takes JSON, never a 500 and never a
traceback in the log; a RecursionError that still escapes a route is a 400 and one line."""

from __future__ import annotations

import logging

import httpx
import pytest
from event_helpers import Running

DEEP = "[" * 3000 + "]" * 3000
LONE = '"\\ud800"'


def _bodies(nested: str) -> list[tuple[str, str]]:
    """(path, body) of every route whose body is JSON with `nested` inside (a chat export:
    ChatGPT's conversations.json; a JSONL export's deep line is skipped, see below)."""
    return [
        ("/chat", '{"character_id": "nova", "text": ' + nested + "}"),
        ("/import/chat?character=nova", '[{"mapping": ' + nested + "}]"),
        ("/characters", '{"spec": "chara_card_v2", "data": {"name": "K", "x": ' + nested + "}}"),
        (
            "/v1/chat/completions",
            '{"model": "nova", "messages": [{"role": "user", "content": ' + nested + "}]}",
        ),
        ("/agents/notes", '{"name": "Liste", "text": ' + nested + "}"),
    ]


def _code(path: str, answer: httpx.Response) -> str:
    """The refusal's code in the route's shape (the OpenAI door's is OpenAI's)."""
    data = answer.json()
    if path.startswith("/v1/"):
        return str(data["error"]["code"])
    return str(data["fehler"] if path == "/chat" else data["detail"]["fehler"])


@pytest.mark.parametrize(
    "nested",
    [DEEP, f"[{LONE}, {DEEP}]", f"[{DEEP}, {LONE}]"],
    ids=["deep", "lone+deep", "deep+lone"],
)
async def test_deep_nesting_is_a_400_on_every_json_route(
    http: httpx.AsyncClient, token, caplog: pytest.LogCaptureFixture, nested: str
) -> None:  # type: ignore[no-untyped-def]
    headers = {"Authorization": f"Bearer {await token('anna')}"}
    caplog.set_level(logging.WARNING)
    for path, body in _bodies(nested):
        answer = await http.post(path, content=body.encode(), headers=headers)
        assert answer.status_code == 400, (path, answer.status_code, answer.text[:300])
        assert _code(path, answer) == "zu_tief", (path, answer.text[:300])
        assert "deeper than 64 levels" in answer.text, path
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []
    assert (await http.get("/characters", headers=headers)).json()["characters"][0][
        "character_id"
    ] == "nova", "nothing was created"


async def test_a_recursion_error_escaping_a_route_is_a_400_and_one_log_line(
    server: Running, http: httpx.AsyncClient, token, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    def walk(depth: int) -> int:
        return walk(depth + 1) + 1

    async def recursing() -> dict[str, int]:
        return {"tiefe": walk(0)}

    server.app.add_api_route("/test/rekursion", recursing, methods=["GET"])
    headers = {"Authorization": f"Bearer {await token('anna')}"}
    caplog.set_level(logging.WARNING)
    answer = await http.get("/test/rekursion", headers=headers)
    assert answer.status_code == 400, answer.text[:300]
    assert answer.json()["detail"]["fehler"] == "zu_tief"
    logged = [r for r in caplog.records if "RecursionError" in r.getMessage()]
    assert len(logged) == 1 and logged[0].levelno == logging.WARNING and not logged[0].exc_info
    assert "\n" not in logged[0].getMessage()


async def test_a_deep_line_of_a_jsonl_export_is_skipped_like_a_broken_one(
    http: httpx.AsyncClient, token
) -> None:  # type: ignore[no-untyped-def]
    headers = {"Authorization": f"Bearer {await token('anna')}"}
    good = '{"id": "a", "speaker": "user", "text": "Hallo", "time": 1}'
    deep = '{"id": "b", "speaker": "user", "text": ' + DEEP + ', "time": 2}'
    lone = '{"id": "c", "speaker": "user", "text": ' + LONE + ', "time": 3}'
    answer = await http.post(
        "/import/chat",
        params={"character": "nova"},
        content=f"{good}\n{deep}\n{lone}".encode(),
        headers=headers,
    )
    assert answer.status_code == 200, answer.text[:300]
    assert answer.json()["neu"] == 1
    assert answer.json()["uebersprungen"] == [
        {"stelle": "line 2", "grund": "nested deeper than 64"},
        {"stelle": "line 3", "grund": "a string holds a lone surrogate (not UTF-8)"},
    ]
