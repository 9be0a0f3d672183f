"""The caller's characters: their own and the shared (built-in) ones, never another user's.

- `GET /characters?limit=&after=` — a page of them by id, without long fields (the
  description cut to a preview); `weiter` is the cursor of the next page
- `GET /characters/{character_id}` — one character's whole record (no stored card)
- `DELETE /characters/{character_id}` — delete an own character (a shared one is read-only)
- `POST /characters/{character_id}/pause` and `…/activate` — pause a character for the caller
  (own or shared: the pause is the caller's alone), and activate it again: what the caller
  wrote meanwhile is stored and answered on activation (docs/behaviour/events.md#paused-characters)

Creating one is an import: `POST /characters` (api/imports_api.py); writing one and changing
an own one: api/character_editor.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final

from fastapi import APIRouter, HTTPException, Query, Request, Response
from pydantic import BaseModel, Field

from novaberg.api.errors import AUTH, ErrorOut
from novaberg.api.memory import CharacterId, Context, User
from novaberg.events import activation
from novaberg.pair import Pair
from novaberg.store import character_activation, characters
from novaberg.store.characters import PREVIEW_CHARS, CharacterSummary

router = APIRouter(tags=["characters"], responses={**AUTH})

PAGE_DEFAULT: Final = 50
PAGE_MAX: Final = 200
CUT_MARK: Final = "…"

UNKNOWN: Final = "unbekannter_character"
"""No character of this id for the caller (none, or another user's: the same answer)."""
SHARED_READ_ONLY: Final = "character_geteilt"


class CharacterItem(BaseModel):
    """A character in the list: nothing long."""

    character_id: str
    name: str
    beschreibung: str = Field(
        description=f"The description's first {PREVIEW_CHARS} characters, '{CUT_MARK}' if cut."
    )
    aus_karte: bool = Field(description="Imported from a character card.")
    avatar: bool = Field(description="GET /characters/{id}/avatar has a picture.")
    eigen: bool = Field(description="The caller's own (true) or a shared built-in one (false).")
    aktiv: bool = Field(description="False while the caller has paused the character.")
    erstellt_am: datetime


class CharacterPage(BaseModel):
    characters: list[CharacterItem]
    weiter: str | None = Field(description="`after` of the next page; null on the last one.")


class CharacterOut(BaseModel):
    """A character's whole record (the stored card itself is not given out)."""

    character_id: str
    name: str
    beschreibung: str
    persoenlichkeit: str
    szenario: str
    erste_nachricht: str
    weitere_begruessungen: list[str] = Field(
        description="The card's alternate greetings (V2/V3 `alternate_greetings`), in order."
    )
    beispiel_dialog: str
    system_prompt: str
    aus_karte: bool
    avatar: bool
    eigen: bool
    aktiv: bool = Field(description="False while the caller has paused the character.")
    erstellt_am: datetime


class Activation(BaseModel):
    """A character's state for the caller after pausing or activating it."""

    character_id: str
    aktiv: bool = Field(description="False: paused for the caller (for nobody else).")
    aufgegriffen: int = Field(
        description="Messages the caller wrote while it was paused, now queued to be answered "
        "(0 when pausing)."
    )


def _item(row: CharacterSummary, paused: set[str]) -> CharacterItem:
    preview = row.description_preview + (CUT_MARK if row.description_cut else "")
    return CharacterItem(
        character_id=row.character_id,
        name=row.name,
        beschreibung=preview,
        aus_karte=row.from_card,
        avatar=row.has_avatar,
        eigen=row.own,
        aktiv=row.character_id not in paused,
        erstellt_am=row.created_at,
    )


def unknown_character(character_id: str) -> HTTPException:
    return HTTPException(
        404, detail={"fehler": UNKNOWN, "detail": f"unknown character {character_id!r}"}
    )


NOT_FOUND: Final[dict[int | str, dict[str, Any]]] = {
    404: {"model": ErrorOut, "description": f"{UNKNOWN}: no such character of the caller"}
}


@router.get("/characters", response_model=CharacterPage, summary="The caller's characters")
async def list_characters(
    user_id: User,
    ctx: Context,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX, description="Characters per page.")] = (
        PAGE_DEFAULT
    ),
    after: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=64,
            pattern=r"^[A-Za-z0-9_.-]+$",
            description="The last character_id of the previous page.",
        ),
    ] = None,
) -> CharacterPage:
    """The characters the caller can talk to, by id: their own and the shared ones."""
    async with ctx.pool.connection() as conn:
        rows = await characters.list_visible(conn, user_id, limit=limit + 1, after=after)
    page = rows[:limit]
    more = len(rows) > limit
    paused = await character_activation.paused_among(
        ctx.pool, user_id, [row.character_id for row in page]
    )
    return CharacterPage(
        characters=[_item(row, paused) for row in page],
        weiter=page[-1].character_id if more else None,
    )


@router.get(
    "/characters/{character_id}",
    response_model=CharacterOut,
    responses=NOT_FOUND,
    summary="One character's whole record",
)
async def get_character(character_id: CharacterId, user_id: User, ctx: Context) -> CharacterOut:
    async with ctx.pool.connection() as conn:
        found = await characters.visible(conn, user_id, character_id)
    if found is None:
        raise unknown_character(character_id)
    paused = await character_activation.is_paused(ctx.pool, Pair(user_id, character_id))
    return CharacterOut(
        character_id=found.character_id,
        name=found.name,
        beschreibung=found.description,
        persoenlichkeit=found.personality,
        szenario=found.scenario,
        erste_nachricht=found.first_message,
        weitere_begruessungen=list(found.alternate_greetings),
        beispiel_dialog=found.example_dialogue,
        system_prompt=found.system_prompt,
        aus_karte=found.card_hash is not None,
        avatar=found.has_avatar,
        eigen=found.own,
        aktiv=not paused,
        erstellt_am=found.created_at,
    )


@router.delete(
    "/characters/{character_id}",
    status_code=204,
    response_class=Response,
    responses={
        **NOT_FOUND,
        403: {
            "model": ErrorOut,
            "description": f"{SHARED_READ_ONLY}: a shared character cannot be deleted",
        },
    },
    summary="Delete an own character",
)
async def delete_character(
    request: Request, character_id: CharacterId, user_id: User, ctx: Context
) -> Response:
    """The character is gone for the caller; the memory and archive of their pair with it
    stay (importing the card again under the same id continues the conversation)."""
    async with ctx.pool.connection() as conn:
        deleted = await characters.delete(conn, user_id, character_id)
        shared = not deleted and await characters.is_visible(conn, user_id, character_id)
    if shared:
        raise HTTPException(
            403,
            detail={
                "fehler": SHARED_READ_ONLY,
                "detail": f"{character_id!r} is a built-in character, shared and read-only",
            },
        )
    if not deleted:
        raise unknown_character(character_id)
    request.app.state.chat.intake.characters.discard(user_id, character_id)
    return Response(status_code=204)


async def _known(ctx: Context, user_id: str, character_id: str) -> Pair:
    """The caller's pair with a character they may talk to (else 404)."""
    async with ctx.pool.connection() as conn:
        if not await characters.is_visible(conn, user_id, character_id):
            raise unknown_character(character_id)
    return Pair(user_id, character_id)


@router.post(
    "/characters/{character_id}/pause",
    response_model=Activation,
    responses=NOT_FOUND,
    summary="Pause a character for the caller",
)
async def pause_character(character_id: CharacterId, user_id: User, ctx: Context) -> Activation:
    """From now on the caller's messages to the character are accepted and stored (session,
    short-term memory) but not answered until it is activated again, or until they have
    waited `NOVABERG_PAUSE_HOLD` seconds (then `turn_gescheitert`, `charakter_pausiert`).
    Only the caller's conversation is paused, also for a shared character. Pausing a paused
    character changes nothing."""
    pair = await _known(ctx, user_id, character_id)
    await activation.pause(ctx.pool, pair, datetime.now(UTC))
    return Activation(character_id=character_id, aktiv=False, aufgegriffen=0)


@router.post(
    "/characters/{character_id}/activate",
    response_model=Activation,
    responses=NOT_FOUND,
    summary="Activate a paused character for the caller",
)
async def activate_character(character_id: CharacterId, user_id: User, ctx: Context) -> Activation:
    """The character answers again; what the caller wrote while it was paused is queued and
    answered at once, in one answer naming every message. Activating an active character
    changes nothing."""
    pair = await _known(ctx, user_id, character_id)
    taken = await activation.activate(ctx.pool, ctx.redis, pair, datetime.now(UTC))
    return Activation(character_id=character_id, aktiv=True, aufgegriffen=taken.messages)
