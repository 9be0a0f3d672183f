"""The security headers wrap the whole app: even the framework's own 500 for a bug, which
no middleware added with `add_middleware` would see, carries them."""

from __future__ import annotations

from fastapi.testclient import TestClient

from novaberg.api.app import create_app
from novaberg.config import load_settings


def test_an_unhandled_error_still_carries_the_headers() -> None:
    app = create_app(load_settings(llm="scripted"))

    @app.get("/kaputt")
    async def broken() -> None:
        raise RuntimeError("a bug")

    answer = TestClient(app, raise_server_exceptions=False).get("/kaputt")
    assert answer.status_code == 500
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["referrer-policy"] == "no-referrer"
