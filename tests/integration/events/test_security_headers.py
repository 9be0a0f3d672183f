"""Every answer carries nosniff, no referrer and no framing; the page and its assets carry
the page's Content-Security-Policy, which /docs (Swagger from a CDN, an inline script) does
not; a route's own stricter header (the avatar's) is kept."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from event_helpers import post

from novaberg.api.security_headers import PAGE_CSP

EVERYWHERE = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


def _carries(answer: httpx.Response, csp: str) -> None:
    for name, value in EVERYWHERE.items():
        assert answer.headers.get(name) == value, (answer.request.url, name, answer.headers)
    assert answer.headers.get("content-security-policy") == csp, answer.request.url


@pytest.mark.parametrize(
    "path",
    ["/", "/web/app.js", "/web/style.css", "/web/fehlt.js", "/sw.js", "/manifest.webmanifest"],
)
async def test_the_page_and_its_assets_carry_the_page_policy(
    http: httpx.AsyncClient, path: str
) -> None:
    _carries(await http.get(path), PAGE_CSP)


async def test_the_page_policy_is_strict() -> None:
    directives = dict(d.strip().split(" ", 1) for d in PAGE_CSP.split(";"))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
    assert "unsafe" not in PAGE_CSP


async def test_api_answers_and_docs_are_not_framed(http: httpx.AsyncClient, token) -> None:
    anna = await token("anna")
    auth = {"Authorization": f"Bearer {anna}"}
    answers = [
        await http.get("/chat/me", headers=auth),
        await http.get("/tokens", headers=auth),
        await http.get("/chat/me"),  # 401
        await http.delete("/tokens/1"),  # 401 from the request guard, before the body
        await http.get("/nirgends"),  # 404 of the framework
        await http.get("/docs"),
        await http.get("/openapi.json"),
        await http.get("/health"),
    ]
    for answer in answers:
        _carries(answer, "frame-ancestors 'none'")
    assert answers[0].status_code == 200 and answers[2].status_code == 401
    assert answers[3].status_code == 401 and answers[4].status_code == 404


async def test_the_fast_chat_path_says_nosniff(http: httpx.AsyncClient, token) -> None:
    accepted = await post(http, await token("anna"), "Hallo")
    assert accepted.status_code == 202
    assert accepted.headers["x-content-type-options"] == "nosniff"
    refused = await post(http, "nvb_unbekannt", "Hallo")
    assert refused.status_code == 401
    assert refused.headers["x-content-type-options"] == "nosniff"


async def test_a_routes_own_policy_is_kept(http: httpx.AsyncClient, token, card_png: Any) -> None:
    auth = {"Authorization": f"Bearer {await token('anna')}"}
    png = card_png({"name": "Mira", "description": "eine Kartografin"})
    made = await http.post(
        "/characters", content=png, headers={**auth, "Content-Type": "image/png"}
    )
    assert made.status_code == 201, made.text
    avatar = await http.get(f"/characters/{made.json()['character_id']}/avatar", headers=auth)
    assert avatar.status_code == 200
    assert avatar.headers["content-security-policy"] == "default-src 'none'"
    assert avatar.headers["x-frame-options"] == "DENY"
