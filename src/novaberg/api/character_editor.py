"""The page's character editor: write a character from scratch, change an own one's words,
give it a picture.

- `POST /new-character` — a new own character from a name and, optionally, the other fields;
  its id is made from the name (`lena`, `lena-2`, … when taken); a path of its own, because
  under `/characters/` every segment is a character id (one may well be called "new")
- `PATCH /characters/{character_id}` — change name, description, personality, scenario or
  greeting of an own character; only the fields sent change
- `PUT /characters/{character_id}/avatar` — its picture: `{"bild": "<base64>"}` of a PNG, JPEG
  or WebP up to 512 KiB, stored re-encoded as PNG (imports/pictures.py)

Only the caller's own characters change. A built-in (shared) one is read-only for everyone:
403 `character_geteilt` (the page offers a copy instead); another user's character does not
exist for the caller: 404 `unbekannter_character`, exactly as an unknown id. The persona the
prompts use is read from the row every turn (agents/turn_context.py), so an edit counts from
the next turn on. Card-only fields (example dialogue, system prompt, lorebook, alternate
greetings) are kept as imported.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from typing import Any, Final

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field

from novaberg.api.characters_api import (
    NOT_FOUND,
    SHARED_READ_ONLY,
    CharacterOut,
    get_character,
    unknown_character,
)
from novaberg.api.errors import AUTH, BODY, ErrorOut, refused_or_invalid
from novaberg.api.memory import CharacterId, Context, User
from novaberg.imports.cards import character_id_for
from novaberg.imports.pictures import STORED_TYPE as AVATAR_TYPE
from novaberg.imports.pictures import PictureError, reencode
from novaberg.store import characters

router = APIRouter(tags=["characters"], responses={**AUTH})

NAME_MAX_CHARS: Final = 100
FIELD_MAX_CHARS: Final = 20_000
"""A written field's longest text (a card's description is rarely a tenth of it)."""
ID_TRIES: Final = 20
"""`name`, `name-2` … `name-20`: then the person should pick another name."""

INVALID_FIELD: Final = "feld_ungueltig"
BAD_PICTURE: Final = "bild_ungueltig"
ID_TAKEN: Final = "character_vorhanden"
TOO_MANY: Final = "zu_viele_charaktere"

WIRE_FIELDS: Final = {
    "name": "name",
    "beschreibung": "description",
    "persoenlichkeit": "personality",
    "szenario": "scenario",
    "erste_nachricht": "first_message",
}
"""Wire field -> attribute of store.characters.EDITABLE."""


class CharacterEdit(BaseModel):
    """The fields to change; a field left out keeps its text, "" empties it (not the name)."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(default=None, description=f"1–{NAME_MAX_CHARS} characters.")
    beschreibung: str | None = None
    persoenlichkeit: str | None = None
    szenario: str | None = None
    erste_nachricht: str | None = Field(
        default=None, description="The greeting shown on an empty conversation."
    )


class NewCharacterIn(CharacterEdit):
    name: str = Field(  # type: ignore[assignment]
        min_length=1, description=f"1–{NAME_MAX_CHARS} characters, not only spaces."
    )


class AvatarIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    bild: str = Field(description="The picture's bytes, base64 (PNG, JPEG or WebP, ≤ 512 KiB).")


def _invalid(field: str, detail: str) -> HTTPException:
    return HTTPException(422, detail={"fehler": INVALID_FIELD, "detail": detail, "feld": field})


def _changes(edit: CharacterEdit) -> dict[str, str]:
    """The sent fields by attribute, checked: a name that is not blank and short, every text
    within FIELD_MAX_CHARS and free of NUL (PostgreSQL stores none)."""
    changes: dict[str, str] = {}
    for wire, attribute in WIRE_FIELDS.items():
        value = getattr(edit, wire)
        if value is None:
            continue
        text = value.strip()
        if "\x00" in text:
            raise _invalid(wire, f"{wire} holds a NUL character")
        if wire == "name" and not text:
            raise _invalid(wire, "a character needs a name")
        limit = NAME_MAX_CHARS if wire == "name" else FIELD_MAX_CHARS
        if len(text) > limit:
            raise _invalid(wire, f"{wire} has {len(text)} characters, at most {limit}")
        changes[attribute] = text
    return changes


async def _own_or_refuse(ctx: Context, user_id: str, character_id: str) -> None:
    """403 for a shared character, 404 for one the caller cannot see (another user's)."""
    async with ctx.pool.connection() as conn:
        if await characters.owns(conn, user_id, character_id):
            return
        visible = await characters.is_visible(conn, user_id, character_id)
    if visible:
        raise HTTPException(
            403,
            detail={
                "fehler": SHARED_READ_ONLY,
                "detail": f"{character_id!r} is a built-in character, shared and read-only",
            },
        )
    raise unknown_character(character_id)


def _doc(text: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": text}


READ_ONLY: Final[dict[int | str, dict[str, Any]]] = {
    403: _doc(f"{SHARED_READ_ONLY}: a built-in character is read-only"),
}


@router.post(
    "/new-character",
    status_code=201,
    response_model=CharacterOut,
    responses={
        **BODY,
        409: _doc(f"{ID_TAKEN}: no free id for this name / {TOO_MANY}: the caller owns the most"),
        422: refused_or_invalid(
            f"{INVALID_FIELD}: a field is empty, too long or holds a NUL (`feld` names it)"
        ),
    },
    summary="Write a new character",
)
async def new_character(
    request: Request, body: NewCharacterIn, user_id: User, ctx: Context
) -> CharacterOut:
    """A character of the caller's own, written rather than imported: its persona is what
    the fields say (the prompts use it from its first turn on)."""
    fields = _changes(body)
    base = character_id_for(fields["name"]) or "charakter"
    created_id = None
    try:
        for attempt in range(1, ID_TRIES + 1):
            suffix = "" if attempt == 1 else f"-{attempt}"
            candidate = base[: 64 - len(suffix)] + suffix
            async with ctx.pool.connection() as conn, conn.transaction():
                if await characters.create(
                    conn,
                    user_id,
                    characters.NewCharacter(
                        character_id=candidate,
                        name=fields["name"],
                        description=fields.get("description", ""),
                        personality=fields.get("personality", ""),
                        scenario=fields.get("scenario", ""),
                        first_message=fields.get("first_message", ""),
                    ),
                    limit=ctx.settings.max_characters,
                ):
                    created_id = candidate
                    break
    except characters.TooManyCharacters as exc:
        raise HTTPException(409, detail={"fehler": TOO_MANY, "detail": str(exc)}) from None
    if created_id is None:
        raise HTTPException(
            409,
            detail={"fehler": ID_TAKEN, "detail": f"ids {base!r} to {base}-{ID_TRIES} are taken"},
        )
    request.app.state.chat.intake.characters.add(user_id, created_id)
    return await get_character(created_id, user_id, ctx)


@router.patch(
    "/characters/{character_id}",
    response_model=CharacterOut,
    responses={
        **BODY,
        **NOT_FOUND,
        **READ_ONLY,
        422: refused_or_invalid(
            f"{INVALID_FIELD}: a field is empty, too long or holds a NUL (`feld` names it)"
        ),
    },
    summary="Change an own character",
)
async def edit_character(
    character_id: CharacterId, body: CharacterEdit, user_id: User, ctx: Context
) -> CharacterOut:
    """The sent fields change; the next turn's persona has them."""
    changes = _changes(body)
    await _own_or_refuse(ctx, user_id, character_id)
    async with ctx.pool.connection() as conn:
        if not await characters.update(conn, user_id, character_id, changes):
            raise unknown_character(character_id)  # deleted meanwhile
    return await get_character(character_id, user_id, ctx)


@router.put(
    "/characters/{character_id}/avatar",
    status_code=204,
    responses={
        **BODY,
        **NOT_FOUND,
        **READ_ONLY,
        422: refused_or_invalid(
            f"{BAD_PICTURE}: not base64 of a PNG, JPEG or WebP of at most 512 KiB"
        ),
    },
    summary="Give an own character a picture",
)
async def upload_avatar(
    character_id: CharacterId, body: AvatarIn, user_id: User, ctx: Context
) -> None:
    """The picture replaces the character's avatar (a card's included)."""
    await _own_or_refuse(ctx, user_id, character_id)
    try:
        raw = base64.b64decode(body.bild, validate=True)
    except (binascii.Error, ValueError):
        raise HTTPException(
            422, detail={"fehler": BAD_PICTURE, "detail": "bild is not base64"}
        ) from None
    try:
        picture = await asyncio.to_thread(reencode, raw)
    except PictureError as exc:
        raise HTTPException(422, detail={"fehler": BAD_PICTURE, "detail": str(exc)}) from None
    async with ctx.pool.connection() as conn:
        if not await characters.set_avatar(conn, user_id, character_id, picture, AVATAR_TYPE):
            raise unknown_character(character_id)
