"""Which `Origin` may open the WebSocket (api/ws.py), and NOVABERG_ALLOWED_ORIGINS."""

from __future__ import annotations

import pytest

from novaberg.api.ws import origin_allowed
from novaberg.config import SettingsError, load_settings

LISTED = frozenset({"https://chat.example.org"})


@pytest.mark.parametrize(
    ("origin", "host", "allowed"),
    [
        (None, "127.0.0.1:8765", True),
        ("http://127.0.0.1:8765", "127.0.0.1:8765", True),
        ("https://chat.example.org", "chat.example.org", True),
        ("HTTP://LOCALHOST:8765", "localhost:8765", True),
        ("https://chat.example.org", "127.0.0.1:8765", True),
        ("https://chat.example.org/", "127.0.0.1:8765", True),
        ("http://127.0.0.1:8766", "127.0.0.1:8765", False),
        ("http://localhost:8765", "127.0.0.1:8765", False),
        ("https://evil.example", "127.0.0.1:8765", False),
        ("https://chat.example.org.evil", "127.0.0.1:8765", False),
        ("null", "127.0.0.1:8765", False),
        ("", "127.0.0.1:8765", False),
        ("http://127.0.0.1:8765", None, False),
    ],
)
def test_origin_allowed(origin: str | None, host: str | None, allowed: bool) -> None:
    assert origin_allowed(origin, host, LISTED) is allowed


def test_allowed_origins_are_parsed_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOVABERG_ALLOWED_ORIGINS", raising=False)
    settings = load_settings(allowed_origins=" https://Chat.Example.org/ ,http://10.0.0.5:8080,")
    assert settings.origins == frozenset({"https://chat.example.org", "http://10.0.0.5:8080"})
    assert load_settings().origins == frozenset(), "default: only the server's own origin"
    for bad in ("chat.example.org", "https://chat.example.org/pfad", "*", "https://a@b"):
        with pytest.raises(SettingsError, match="NOVABERG_ALLOWED_ORIGINS"):
            load_settings(allowed_origins=bad)
