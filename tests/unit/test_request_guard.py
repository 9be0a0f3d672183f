"""The request guard's header reading, without a server: what a client declares is bounded
before int() sees it."""

from __future__ import annotations

from novaberg.api.request_guard import declared_length


def test_a_content_length_is_up_to_18_ascii_digits() -> None:
    """int() of 5,000 digits raises (Python refuses > 4,300), which would be a 500 on any
    ASGI server that passes such a header on; it is simply no declared length."""
    assert declared_length({"headers": [(b"content-length", b"1024")]}) == 1024
    for value in (b"9" * 5000, b"9" * 19, "²".encode(), b"-1", b""):
        assert declared_length({"headers": [(b"content-length", value)]}) is None, value[:8]
