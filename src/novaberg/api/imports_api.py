"""Imports over HTTP, for the page: `POST /characters` (a character card, PNG or JSON, as the
request body; the character is the caller's own) and `POST /import/chat` (a chat export as
the body). Listing and reading characters: api/characters_api.py.

The same services as `novaberg import card|chat` (imports/): a body that is no card or no
chat export is a 422 with one line and stores nothing; a re-import adds nothing. The
lorebook and the archived turns belong to the caller's pair with the character.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final

from fastapi import APIRouter, HTTPException, Query, Request, Response

from novaberg.api.errors import AUTH, BODY, ErrorOut
from novaberg.api.fields import NO_NUL, NoNul
from novaberg.api.memory import Context, User
from novaberg.imports.card_import import CardConflict, import_card
from novaberg.imports.cards import CardError, read_card
from novaberg.imports.chat_formats import ChatFormatError, parse_chat
from novaberg.imports.chat_import import import_chat
from novaberg.store import characters
from novaberg.store.keys import Pair

router = APIRouter(tags=["imports"], responses={**AUTH})


def _doc(text: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": text}


def _not_importable(text: str) -> dict[str, Any]:
    """A 422 is either the framework's (a bad parameter) or ours (a file that cannot be
    imported): both shapes are documented."""
    shapes = [
        {"$ref": "#/components/schemas/HTTPValidationError"},
        {"$ref": "#/components/schemas/ErrorOut"},
    ]
    return {"description": text, "content": {"application/json": {"schema": {"anyOf": shapes}}}}


UPLOAD: Final[dict[int | str, dict[str, Any]]] = {
    **BODY,
    413: _doc("zu_gross: the file is over the upload's limit"),
}

CARD_BODY: Final[dict[str, Any]] = {
    "requestBody": {
        "required": True,
        "description": "A character card: a PNG carrying it in a `ccv3` or `chara` text "
        "chunk, or its JSON (V1, V2 or V3).",
        "content": {
            "image/png": {"schema": {"type": "string", "format": "binary"}},
            "application/json": {"schema": {"type": "object"}},
        },
    }
}
CHAT_BODY: Final[dict[str, Any]] = {
    "requestBody": {
        "required": True,
        "description": "A chat export: SillyTavern chat JSONL, ChatGPT's conversations.json, "
        'or JSONL of {"id", "speaker": "user"|"character", "text", "time"}.',
        "content": {
            "application/x-ndjson": {"schema": {"type": "string", "format": "binary"}},
            "application/json": {"schema": {"type": "array", "items": {"type": "object"}}},
        },
    }
}

CARD_MAX_BYTES: Final = 16 * 1024 * 1024
"""A card PNG carries a picture: a few MB are common."""
CHAT_MAX_BYTES: Final = 64 * 1024 * 1024
"""A chat export of years (ChatGPT's conversations.json grows large)."""

BODY_LIMITS: Final = {"/characters": CARD_MAX_BYTES, "/import/chat": CHAT_MAX_BYTES}
"""Request-body limits of these paths (api/request_guard.py), above the default 1 MiB."""
BINARY_PATHS: Final = frozenset({"/characters"})
"""A card may be a PNG: its body is not checked as text (`read_card` checks it)."""


def _refused(code: str, detail: str, status: int = 422) -> HTTPException:
    return HTTPException(status, detail={"fehler": code, "detail": detail})


@router.post(
    "/characters",
    status_code=201,
    responses={
        **UPLOAD,
        200: {"description": "this card was imported already (its lore added if missing)"},
        409: _doc(
            "character_vorhanden: the id belongs to another card or character of the caller "
            "or a shared one / zu_viele_charaktere: the caller owns NOVABERG_MAX_CHARACTERS"
        ),
        422: _not_importable("keine_karte: the body is no character card (one line: why)"),
    },
    openapi_extra=CARD_BODY,
)
async def create_character(
    request: Request,
    response: Response,
    user_id: User,
    ctx: Context,
    character_id: Annotated[
        str | None,
        Query(alias="id", max_length=64, pattern=r"^[A-Za-z0-9_.-]+$", description="Character id."),
    ] = None,
) -> dict[str, Any]:
    """Create a character from the card in the body (V1/V2/V3; PNG with its `ccv3`/`chara`
    chunk, or JSON). 201 when created, 200 when this card was imported already."""
    try:
        card = read_card(await request.body())
        report = await import_card(
            ctx.pool,
            ctx.model,
            card,
            user_id=user_id,
            now=datetime.now(UTC),
            character_id=character_id,
            max_characters=ctx.settings.max_characters,
        )
    except CardError as exc:
        raise _refused("keine_karte", str(exc)) from None
    except CardConflict as exc:
        raise _refused("character_vorhanden", str(exc), 409) from None
    except characters.TooManyCharacters as exc:
        raise _refused("zu_viele_charaktere", str(exc), 409) from None
    request.app.state.chat.intake.characters.add(user_id, report.character_id)
    if not report.created:
        response.status_code = 200
    return report.as_json()


@router.post(
    "/import/chat",
    responses={
        **UPLOAD,
        404: _doc("unbekannter_character: no such character"),
        422: _not_importable("kein_chat: the body is no chat export (one line: why)"),
    },
    openapi_extra=CHAT_BODY,
)
async def import_chat_export(
    request: Request,
    user_id: User,
    ctx: Context,
    character: Annotated[str, Query(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")],
    pin: Annotated[bool, Query(description="Keep the turns beyond the yearly purge.")] = False,
    name: Annotated[
        str, Query(max_length=200, pattern=NO_NUL, description="The file's name."), NoNul
    ] = "",
) -> dict[str, Any]:
    """Archive the chat export in the body (SillyTavern JSONL, ChatGPT conversations.json,
    plain JSONL). Embedding only, no model call; skipped lines are listed with their line."""
    try:
        parsed = parse_chat(await request.body(), tz=ctx.settings.tz, name=name)
    except ChatFormatError as exc:
        raise _refused("kein_chat", str(exc)) from None
    async with ctx.pool.connection() as conn:
        if not await characters.is_visible(conn, user_id, character):
            raise _refused("unbekannter_character", f"unknown character {character!r}", 404)
    report = await import_chat(ctx.pool, ctx.model, Pair(user_id, character), parsed, pinned=pin)
    return report.as_json()
