"""Imports over HTTP, for the page: `POST /characters` (a character card, PNG or JSON, as the
request body; the character is the caller's own) and `POST /import/chat` (a chat export as
the body). Listing and reading characters: api/characters_api.py.

The same services as `novaberg import card|chat` (imports/): a body that is no card or no
chat export is a 422 with one line and stores nothing; a re-import adds nothing. The
lorebook and the archived turns belong to the caller's pair with the character.

Bounded work (README "Limits"): the body's size is a setting the request guard enforces; the
file's lines, lorebook entries and field lengths (413 `zu_gross`), its nesting (400
`zu_tief`) and the archive quota (409 `archiv_voll`) are checked before anything is stored,
each refusal naming its setting. Parsing runs in a worker thread, never on the event loop,
and one import per person at a time (api/import_gate.py: 429 `import_laeuft`).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated, Any, Final

from fastapi import APIRouter, HTTPException, Query, Request, Response

from novaberg.api.errors import AUTH, BODY, ErrorOut
from novaberg.api.fields import NO_NUL, NoNul
from novaberg.api.import_gate import IMPORT_BUSY
from novaberg.api.memory import Context, User
from novaberg.api.request_guard import BodyLimit
from novaberg.bounded_json import TooDeep
from novaberg.config import Settings
from novaberg.imports.card_import import CardConflict, import_card
from novaberg.imports.cards import CardError, read_card
from novaberg.imports.chat_formats import ChatFormatError, parse_chat
from novaberg.imports.chat_import import import_chat
from novaberg.imports.limits import ImportLimits, QuotaFull, TooLarge, setting_name
from novaberg.pair import Pair
from novaberg.store import characters

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
    413: _doc(
        "zu_gross: the file is over one of its limits (size, lines, lorebook entries, a "
        "field's length); the sentence names the limit, the figure and the setting"
    ),
    **IMPORT_BUSY,
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

IMPORT_PATHS: Final = frozenset({"/characters", "/import/chat"})
"""What a POST to these paths does is an import (api/import_gate.py)."""
BINARY_PATHS: Final = frozenset({"/characters"})
"""A card may be a PNG: its body is not checked as text (`read_card` checks it)."""
JSON_LINES_PATHS: Final = frozenset({"/import/chat"})
"""A chat export may be JSONL: the guard checks it as UTF-8 only, `parse_chat` each line."""


def body_limits(settings: Settings) -> dict[str, BodyLimit]:
    """Request-body limits of the upload paths (api/request_guard.py), from the settings."""
    return {
        "/characters": BodyLimit(settings.max_card_bytes, setting_name("max_card_bytes")),
        "/import/chat": BodyLimit(settings.max_import_bytes, setting_name("max_import_bytes")),
    }


def _refused(code: str, detail: str, status: int = 422) -> HTTPException:
    return HTTPException(status, detail={"fehler": code, "detail": detail})


def _over_limit(exc: TooLarge | TooDeep) -> HTTPException:
    if isinstance(exc, TooDeep):
        return _refused("zu_tief", str(exc), 400)
    return _refused("zu_gross", f"{exc}; nothing was stored", 413)


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
    limits = ImportLimits.of(ctx.settings)
    try:
        card = await asyncio.to_thread(read_card, await request.body(), limits)
        report = await import_card(
            ctx.pool,
            ctx.model,
            card,
            user_id=user_id,
            now=datetime.now(UTC),
            character_id=character_id,
            max_characters=ctx.settings.max_characters,
        )
    except (TooLarge, TooDeep) as exc:
        raise _over_limit(exc) from None
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
        409: _doc(
            "archiv_voll: the new turns would pass the caller's archive quota "
            "(NOVABERG_MAX_ARCHIVE_TURNS); nothing was stored"
        ),
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
    plain JSONL). Embedding only, no model call; the first 100 skipped lines are listed with
    their line, `uebersprungen_gesamt` counts them all."""
    async with ctx.pool.connection() as conn:
        if not await characters.is_visible(conn, user_id, character):
            raise _refused("unbekannter_character", f"unknown character {character!r}", 404)
    limits = ImportLimits.of(ctx.settings)
    body = await request.body()
    try:
        parsed = await asyncio.to_thread(
            parse_chat, body, tz=ctx.settings.tz, name=name, limits=limits
        )
    except (TooLarge, TooDeep) as exc:
        raise _over_limit(exc) from None
    except ChatFormatError as exc:
        raise _refused("kein_chat", str(exc)) from None
    pair = Pair(user_id, character)
    try:
        report = await import_chat(
            ctx.pool, ctx.model, pair, parsed, pinned=pin, max_turns=limits.archive_turns
        )
    except QuotaFull as exc:
        raise _refused("archiv_voll", str(exc), 409) from None
    return report.as_json()
