"""The model connection in the page's settings (docs/behaviour/web.md#model-connection).

- `GET /page/model` — the connection in use: from the environment or set in the page.
- `POST /page/model/test` — check a connection like `novaberg doctor` (api/model_check.py).
- `PUT /page/model` — check it and, if the chat model answers, make it the installation's:
  every API and worker process uses it from its next model call, without a restart.
- `DELETE /page/model` — back to the environment's `NOVABERG_LLM_*` variables.

The connection is the whole installation's, and testing one makes the server send requests
to the URL given: only the installation's operator (`NOVABERG_DEFAULT_USER`, the person the
local page signs in as) may test or change it. Everyone else sees the model's name, never
the URL or the key; the key is never returned, only whether one is set and its last four
characters.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, Field

from novaberg.api.auth import current_user
from novaberg.api.context import AppContext, get_context
from novaberg.api.errors import AUTH, BODY, ErrorOut
from novaberg.api.model_check import ConnectionCheck, check_connection
from novaberg.api.page_api import page_settings
from novaberg.config import LLMBackend, SettingsError
from novaberg.llm.connection import check_url
from novaberg.store.model_connection import (
    StoredConnection,
    clear_connection,
    read_connection,
    write_connection,
)

router = APIRouter(tags=["page"], responses={**AUTH})

User = Annotated[str, Depends(current_user)]
Context = Annotated[AppContext, Depends(get_context)]

KEY_TAIL: Final = 4
"""Characters of a key the page may show, so a person can tell two keys apart."""

REFUSED_SHAPES: Final = [
    {"$ref": "#/components/schemas/HTTPValidationError"},
    {"$ref": "#/components/schemas/ErrorOut"},
]
"""A 422 is the framework's (a malformed body) or ours (the URL, the failed check)."""

OPERATOR_ONLY: dict[int | str, dict[str, Any]] = {
    **BODY,
    403: {"model": ErrorOut, "description": "nur_betreiber: not the operator"},
    422: {
        "description": "url_ungueltig: no http(s) URL with a host / verbindung_fehlgeschlagen: "
        "the chat model failed the check (`pruefung` holds it); or the framework's list",
        "content": {"application/json": {"schema": {"anyOf": REFUSED_SHAPES}}},
    },
}


class ModelConnectionView(BaseModel):
    quelle: Literal["umgebung", "seite"] = Field(
        description="umgebung: the NOVABERG_LLM_* variables; seite: set in the page."
    )
    backend: str
    modell: str
    url: str | None = Field(description="The server's URL (the operator only).")
    schluessel: str = Field(
        description="'' without a key, else its last characters behind dots (operator only)."
    )
    darf_aendern: bool = Field(description="This person may test and change the connection.")
    geaendert_von: str | None = None
    geaendert_am: datetime | None = None


class ModelConnectionIn(BaseModel):
    url: str = Field(min_length=1, max_length=2048)
    modell: str = Field(min_length=1, max_length=200)
    schluessel: str | None = Field(
        default=None, max_length=4096, description="None: keep the key in use; '': no key."
    )


class AppliedConnection(BaseModel):
    verbindung: ModelConnectionView
    pruefung: ConnectionCheck


def is_operator(ctx: AppContext, user_id: str) -> bool:
    return user_id == ctx.settings.default_user


def masked(key: str) -> str:
    return "" if not key else "••••" + key[-KEY_TAIL:] if len(key) > KEY_TAIL * 2 else "••••"


def view(ctx: AppContext, user_id: str, stored: StoredConnection | None) -> ModelConnectionView:
    operator = is_operator(ctx, user_id)
    if stored is not None:
        return ModelConnectionView(
            quelle="seite",
            backend=LLMBackend.OPENAI.value,
            modell=stored.model,
            url=stored.url if operator else None,
            schluessel=masked(stored.api_key) if operator else "",
            darf_aendern=operator,
            geaendert_von=stored.changed_by,
            geaendert_am=stored.changed_at,
        )
    settings = ctx.settings
    shown = page_settings(settings)
    remote = settings.llm_backend is LLMBackend.OPENAI
    return ModelConnectionView(
        quelle="umgebung",
        backend=shown.backend,
        modell=shown.modell,
        url=(settings.llm_url if remote else None) if operator else None,
        schluessel=masked(settings.llm_api_key) if operator and remote else "",
        darf_aendern=operator,
    )


def _operator_only(ctx: AppContext, user_id: str) -> None:
    if not is_operator(ctx, user_id):
        raise HTTPException(
            403,
            detail={
                "fehler": "nur_betreiber",
                "detail": "only the installation's operator may test or change the model",
            },
        )


async def _target(ctx: AppContext, body: ModelConnectionIn) -> tuple[str, str, str]:
    """(url, model, key) to use: the URL checked, the key kept when none is given."""
    try:
        url = check_url(body.url)
    except SettingsError as exc:
        raise HTTPException(422, detail={"fehler": "url_ungueltig", "detail": str(exc)}) from exc
    key = body.schluessel
    if key is None:
        stored = await read_connection(ctx.pool)
        key = stored.api_key if stored is not None else ctx.settings.llm_api_key
    return url, body.modell.strip(), key


@router.get("/page/model", response_model=ModelConnectionView, summary="The model connection")
async def model_connection(user_id: User, ctx: Context) -> ModelConnectionView:
    return view(ctx, user_id, await read_connection(ctx.pool))


@router.post(
    "/page/model/test",
    response_model=ConnectionCheck,
    summary="Check a model connection like `novaberg doctor`",
    responses=OPERATOR_ONLY,
)
async def test_connection(body: ModelConnectionIn, user_id: User, ctx: Context) -> ConnectionCheck:
    _operator_only(ctx, user_id)
    return await check_connection(ctx, *await _target(ctx, body))


@router.put(
    "/page/model",
    response_model=AppliedConnection,
    summary="Check and apply a model connection (every process, no restart)",
    responses=OPERATOR_ONLY,
)
async def apply_connection(
    body: ModelConnectionIn, user_id: User, ctx: Context
) -> AppliedConnection:
    _operator_only(ctx, user_id)
    url, model, key = await _target(ctx, body)
    check = await check_connection(ctx, url, model, key)
    if not check.ok:
        raise HTTPException(
            422,
            detail={
                "fehler": "verbindung_fehlgeschlagen",
                "detail": check.chat.detail,
                "pruefung": check.model_dump(),
            },
        )
    stored = await write_connection(
        ctx.pool, ctx.redis, url=url, model=model, api_key=key, user_id=user_id
    )
    return AppliedConnection(verbindung=view(ctx, user_id, stored), pruefung=check)


@router.delete(
    "/page/model",
    response_model=ModelConnectionView,
    summary="Back to the environment's model connection",
    responses=OPERATOR_ONLY,
)
async def reset_connection(user_id: User, ctx: Context) -> ModelConnectionView:
    _operator_only(ctx, user_id)
    await clear_connection(ctx.pool, ctx.redis)
    return view(ctx, user_id, None)
