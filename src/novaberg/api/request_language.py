"""The language of the request being answered: German or English, from `Accept-Language`.

Why a context variable: the sentence an error answer carries (`meldung`,
api/error_sentences.py) is chosen where the answer is built — in the intake, the request
guard, the exception handlers — many calls away from the request's headers. The app sets
the language once, at its single entry point (api/app.py `NovabergApp.__call__`), for the
task that serves the request; every answer built inside reads it. German when the header is
absent or names neither language (docs/behaviour/web.md#language).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

from starlette.types import Scope

DEFAULT_LANGUAGE: Final = "de"
LANGUAGES: Final = ("de", "en")

_current: ContextVar[str] = ContextVar("novaberg_request_language", default=DEFAULT_LANGUAGE)


def parse_accept_language(value: str | None) -> str:
    """The first of our languages the header names, by its q-weights (ties keep their
    order); German when it names none."""
    if not value:
        return DEFAULT_LANGUAGE
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(value.split(",")):
        tag, _, params = part.strip().partition(";")
        base = tag.strip().lower().split("-", 1)[0]
        if base not in LANGUAGES:
            continue
        weight = 1.0
        for param in params.split(";"):
            name, _, number = param.strip().partition("=")
            if name == "q":
                try:
                    weight = float(number)
                except ValueError:
                    weight = 0.0
        if weight > 0:
            ranked.append((-weight, index, base))
    return min(ranked)[2] if ranked else DEFAULT_LANGUAGE


def set_from_scope(scope: Scope) -> None:
    """Take the language of an HTTP or WebSocket request (its `Accept-Language`)."""
    for name, value in scope.get("headers") or ():
        if name == b"accept-language":
            _current.set(parse_accept_language(value.decode("latin-1")))
            return
    _current.set(DEFAULT_LANGUAGE)


def current_language() -> str:
    """The language of the request being answered ("de" outside any request)."""
    return _current.get()
