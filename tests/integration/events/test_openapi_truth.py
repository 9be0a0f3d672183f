"""The OpenAPI document says what the server does (explicit cases; the schemathesis run in
test_openapi_contract.py covers the rest)."""

from __future__ import annotations

import httpx


async def test_statuses_security_and_limits_are_documented(http: httpx.AsyncClient) -> None:
    spec = (await http.get("/openapi.json")).json()
    assert "bearer" in spec["components"]["securitySchemes"]
    chat = spec["paths"]["/chat"]["post"]
    assert chat["security"] == [{"bearer": []}]
    assert {"400", "401", "404", "413", "422", "429"} <= set(chat["responses"])
    assert "Retry-After" in chat["responses"]["429"]["headers"]
    notes = spec["paths"]["/agents/notes/{note_id}"]["patch"]
    assert {"400", "401", "404", "409", "413", "422"} <= set(notes["responses"])
    assert notes["security"] == [{"bearer": []}]
    schemas = spec["components"]["schemas"]
    when = schemas["TimelineCreate"]["properties"]["event_time"]
    assert when["pattern"].startswith("^(19|20|21)"), "the 1900-2199 range is in the schema"
    name = schemas["NoteCreate"]["properties"]["name"]
    assert (name["minLength"], name["maxLength"]) == (1, 200) and "pattern" in name
    body = chat["requestBody"]["content"]["application/json"]["schema"]
    text = body["properties"]["text"]
    assert text["maxLength"] == 16_384 and "pattern" in text


async def test_numbers_are_no_date_times(http: httpx.AsyncClient, token) -> None:
    headers = {"Authorization": f"Bearer {await token('anna')}"}
    for when in (0, 1_700_000_000, "0", "1700000000", "1899-12-31T23:00:00+00:00"):
        made = await http.post(
            "/agents/timeline", json={"title": "T", "event_time": when}, headers=headers
        )
        assert made.status_code == 422, (when, made.text)
    listed = await http.get("/agents/timeline", params={"von": "0"}, headers=headers)
    assert listed.status_code == 422
    good = await http.post(
        "/agents/timeline",
        json={"title": "T", "event_time": "2031-05-02T10:00:00+02:00"},
        headers=headers,
    )
    assert good.status_code == 201, good.text


async def test_405_names_every_allowed_method(http: httpx.AsyncClient) -> None:
    answer = await http.put("/agents/notes/1")
    assert answer.status_code == 405
    assert set(answer.headers["allow"].split(", ")) == {"GET", "PATCH", "DELETE"}
    answer = await http.put("/agents/notes")
    assert set(answer.headers["allow"].split(", ")) == {"GET", "POST"}
