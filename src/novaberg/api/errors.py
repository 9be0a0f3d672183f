"""The error answers every route can give, documented once so the OpenAPI tells what the
server does (`responses=` of the routers): each carries `{"detail": {"fehler", "detail"}}`
(FastAPI's own 422 lists the validation errors instead). Also the 405 answer, which names
every method the path allows (the framework would name only the first route's), and the
answer to a `RecursionError` that escapes a route: a 400 `zu_tief` with a sentence and one
log line, never a 500 with a traceback as long as the nesting that caused it (bodies are
checked for depth before they are parsed, bounded_json.py; this catches what slips past)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from novaberg.api.error_sentences import with_sentence

log = logging.getLogger(__name__)


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow")
    fehler: str
    detail: str | None = None
    meldung: str | None = Field(
        default=None,
        description="The same in one sentence for a person to read, in the language of "
        "the request's Accept-Language (German when absent).",
    )


class ErrorOut(BaseModel):
    detail: ErrorDetail


def _doc(text: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": text}


AUTH: dict[int | str, dict[str, Any]] = {
    401: _doc("token_fehlt / token_ungueltig: no or an unknown bearer token"),
    503: _doc("nicht_bereit: the server is still starting"),
}
BODY: dict[int | str, dict[str, Any]] = {
    400: _doc(
        "utf8_ungueltig: the body is not UTF-8 text (a lone surrogate included); zu_tief: "
        "its JSON nests deeper than 64 levels"
    ),
    408: _doc("zeitueberschreitung: the body did not arrive in time"),
    413: _doc("zu_gross: the body is over 1 MiB"),
    429: {
        **_doc("zu_viele_anfragen: over the token's rate of writes (see Retry-After)"),
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    },
}
EMBEDDING: dict[int | str, dict[str, Any]] = {
    503: _doc(
        "nicht_bereit: the server is still starting / modell_nicht_erreichbar: the new text "
        "could not be embedded; nothing was changed"
    )
}
ITEM: dict[int | str, dict[str, Any]] = {404: _doc("nicht_gefunden: no such item of the caller")}
CONFLICT: dict[int | str, dict[str, Any]] = {
    409: _doc("archiviert / inaktiv / zu_viele_anweisungen / limit_erreicht")
}


def refused_or_invalid(text: str) -> dict[str, Any]:
    """A 422 that is either the framework's (a body that does not fit the schema) or ours
    (`{"fehler", ...}`: a value the route refuses): both shapes documented."""
    shapes = [
        {"$ref": "#/components/schemas/HTTPValidationError"},
        {"$ref": "#/components/schemas/ErrorOut"},
    ]
    return {"description": text, "content": {"application/json": {"schema": {"anyOf": shapes}}}}


METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(app: FastAPI, scope: dict[str, Any]) -> list[str]:
    """Every method some route of `app` fully serves at the request's path (asked by
    method: included routers nest their routes)."""
    return [
        method
        for method in METHODS
        if any(
            route.matches({**scope, "method": method})[0] is Match.FULL
            for route in app.router.routes
        )
    ]


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 405:
        allow = ", ".join(allowed_methods(request.app, dict(request.scope)))
        exc = StarletteHTTPException(405, exc.detail, headers={"Allow": allow})
    if isinstance(exc.detail, dict):  # ours: `{"fehler", "detail"}` gains its sentence
        return JSONResponse(
            {"detail": with_sentence(exc.detail)}, exc.status_code, headers=exc.headers
        )
    return await http_exception_handler(request, exc)


async def _too_deep(request: Request, exc: Exception) -> Response:
    log.warning("%s %s: RecursionError (nesting too deep)", request.method, request.url.path)
    detail = "the request nests too deep to be handled (arrays or objects inside each other)"
    return JSONResponse({"detail": with_sentence({"fehler": "zu_tief", "detail": detail})}, 400)


def install(app: FastAPI) -> None:
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RecursionError, _too_deep)
