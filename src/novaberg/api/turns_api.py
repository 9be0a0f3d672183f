"""Message controls over HTTP (docs/behaviour/events.md#message-controls).

- `POST /turns/{character_id}/regenerate` — a new answer to the last turn; the old one is
  kept among the alternatives
- `GET /turns/{character_id}/variants` — the last turn's alternatives (‹ 2/3 ›)
- `POST /turns/{character_id}/variants/{index}` — choose one: it becomes the answer
- `DELETE /turns/{character_id}/messages/{message_id}` — take the last message back
- `PUT /turns/{character_id}/messages/{message_id}` — change it: taken back, the new text
  sent as a new message (Nova answers it)
- `POST /turns/{character_id}/stop` — end the running turn before its answer leaves

Only the caller's own pair is ever looked at: another user's turn or message is a 404 like
one that does not exist. The work is in events/turn_controls.py; every change reaches all of
the caller's clients over the WebSocket.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Request
from pydantic import BaseModel, Field

from novaberg.api.characters_api import _known
from novaberg.api.chat import ChatServices, enqueue
from novaberg.api.errors import AUTH, BODY, ErrorOut, refused_or_invalid
from novaberg.api.fields import NOT_BLANK
from novaberg.api.memory import CharacterId, Context, User
from novaberg.events.intake import Accepted
from novaberg.events.model import MAX_PROMPT_BYTES
from novaberg.events.turn_controls import TurnControlError, TurnControls
from novaberg.pair import Pair

router = APIRouter(tags=["turns"], responses={**AUTH})

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "No such character, turn or message of the caller."},
    409: {"model": ErrorOut, "description": "Not possible now (a turn runs, not the last)."},
}
WITH_BODY: dict[int | str, dict[str, Any]] = {
    **BODY,
    **ERRORS,
    422: refused_or_invalid("text_leer / text_ungueltig: the new text is refused"),
}
"""The routes that write: the request guard's refusals of a body (400/408/413/429,
api/request_guard.py) and a refused value (422)."""


class RegenerateIn(BaseModel):
    turn_id: str | None = Field(
        default=None, description="The turn meant; refused (409) when it is not the last one."
    )


class Regeneration(BaseModel):
    turn_id: str
    nachrichten_ids: list[str]
    texte: list[str] = Field(
        description="The answers so far; the new one follows as a "
        "`character_response` of the same turn."
    )


class VariantsOut(BaseModel):
    turn_id: str
    texte: list[str]
    gewaehlt: int | None = Field(description="Index of the answer shown; null: a new one comes.")


class ChooseIn(BaseModel):
    turn_id: str


class RemovalOut(BaseModel):
    art: str = Field(
        description="`zurueckgezogen` (before an answer), `geloescht` (with its answer) or "
        "`wird_zurueckgezogen` (a run holds it: `turn_entfernt` follows when it has ended)."
    )
    turn_id: str | None
    nachrichten_ids: list[str]


class EditIn(BaseModel):
    text: str = Field(
        description="The new text; ≤ 16 KiB UTF-8, not blank, no NUL (checked like POST /chat).",
        json_schema_extra={"maxLength": MAX_PROMPT_BYTES, "pattern": NOT_BLANK},
    )
    client_id: str | None = Field(default=None, min_length=1, max_length=64)


class EditOut(RemovalOut):
    neu: dict[str, object] = Field(description="`{nachrichten_id, empfangen_am}` of the new text.")


class StopOut(BaseModel):
    gestoppt: str = Field(description="The stopped turn, or `warteschlange` (queued messages).")


def _controls(ctx: Context) -> TurnControls:
    return TurnControls(ctx.redis, ctx.pool)


def _refused(exc: TurnControlError) -> HTTPException:
    return HTTPException(exc.status, detail={"fehler": exc.code, "detail": exc.detail})


async def _pair(ctx: Context, user_id: str, character_id: str) -> Pair:
    return await _known(ctx, user_id, character_id)


@router.post(
    "/turns/{character_id}/regenerate",
    response_model=Regeneration,
    status_code=202,
    responses=WITH_BODY,
    summary="A new answer to the last turn",
)
async def regenerate(
    character_id: CharacterId,
    user_id: User,
    ctx: Context,
    body: Annotated[RegenerateIn | None, Body()] = None,
) -> Regeneration:
    """The CharacterGraph runs again for the last answered turn; the person's message is
    not stored again. The new answer arrives as `character_response` naming the same turn
    and ids; `antwort_varianten` tells every client what is kept."""
    pair = await _pair(ctx, user_id, character_id)
    try:
        started = await _controls(ctx).regenerate(pair, body.turn_id if body else None)
    except TurnControlError as exc:
        raise _refused(exc) from None
    return Regeneration(
        turn_id=started.turn_id, nachrichten_ids=started.message_ids, texte=started.texts
    )


@router.get(
    "/turns/{character_id}/variants",
    response_model=VariantsOut,
    responses=ERRORS,
    summary="The last answer's alternatives",
)
async def variants(character_id: CharacterId, user_id: User, ctx: Context) -> VariantsOut:
    """404 when the last answer has no alternatives."""
    pair = await _pair(ctx, user_id, character_id)
    shown = await _controls(ctx).current_variants(pair)
    if shown is None:
        raise HTTPException(
            404, detail={"fehler": "turn_unbekannt", "detail": "no alternatives to show"}
        )
    return VariantsOut(turn_id=shown.turn_id, texte=shown.texts, gewaehlt=shown.chosen)


@router.post(
    "/turns/{character_id}/variants/{index}",
    response_model=VariantsOut,
    responses=WITH_BODY,
    summary="Choose one of the last answer's alternatives",
)
async def choose(
    character_id: CharacterId, index: int, body: ChooseIn, user_id: User, ctx: Context
) -> VariantsOut:
    """The chosen text becomes the answer in the session, the history and the page."""
    pair = await _pair(ctx, user_id, character_id)
    try:
        chosen = await _controls(ctx).choose(pair, body.turn_id, index)
    except TurnControlError as exc:
        raise _refused(exc) from None
    return VariantsOut(turn_id=chosen.turn_id, texte=chosen.texts, gewaehlt=chosen.chosen)


@router.delete(
    "/turns/{character_id}/messages/{message_id}",
    response_model=RemovalOut,
    responses=WITH_BODY,
    summary="Take the last message back",
)
async def remove(
    character_id: CharacterId, message_id: str, user_id: User, ctx: Context
) -> RemovalOut:
    """Before the answer: no answer comes. After it: message and answer leave the history
    and what the turn left in memory goes."""
    pair = await _pair(ctx, user_id, character_id)
    try:
        removal = await _controls(ctx).remove(pair, message_id)
    except TurnControlError as exc:
        raise _refused(exc) from None
    return RemovalOut(
        art=removal.kind, turn_id=removal.turn_id, nachrichten_ids=removal.message_ids
    )


@router.put(
    "/turns/{character_id}/messages/{message_id}",
    response_model=EditOut,
    responses=WITH_BODY,
    summary="Change the last message",
)
async def edit(
    character_id: CharacterId,
    message_id: str,
    body: EditIn,
    user_id: User,
    ctx: Context,
    request: Request,
) -> EditOut:
    """The message is taken back (as DELETE) and the new text sent as a new message, which
    Nova answers; the new text is checked like `POST /chat` first."""
    pair = await _pair(ctx, user_id, character_id)
    services: ChatServices = request.app.state.chat
    # checked before the old message is taken back: a refused text changes nothing
    if not body.text.strip():
        raise HTTPException(422, detail={"fehler": "text_leer", "detail": "empty text"})
    if "\x00" in body.text:
        raise HTTPException(422, detail={"fehler": "text_ungueltig", "detail": "a NUL character"})
    if len(body.text.strip().encode("utf-8", "surrogatepass")) > MAX_PROMPT_BYTES:
        raise HTTPException(
            413, detail={"fehler": "text_zu_lang", "detail": f"over {MAX_PROMPT_BYTES} bytes"}
        )
    try:
        removal = await _controls(ctx).remove(pair, message_id)
    except TurnControlError as exc:
        raise _refused(exc) from None
    accepted = await enqueue(services, user_id, character_id, body.text, body.client_id)
    if not isinstance(accepted, Accepted):
        raise HTTPException(accepted.status, detail=json.loads(accepted.body))
    return EditOut(
        art=removal.kind,
        turn_id=removal.turn_id,
        nachrichten_ids=removal.message_ids,
        neu={"nachrichten_id": accepted.message_id, "empfangen_am": accepted.received_at},
    )


@router.post(
    "/turns/{character_id}/stop",
    response_model=StopOut,
    responses=WITH_BODY,
    summary="Stop the running turn",
)
async def stop(character_id: CharacterId, user_id: User, ctx: Context) -> StopOut:
    """The run ends after its current step, before its answer leaves; its messages end in
    `turn_gescheitert` with reason `gestoppt` (kept in the history, to send again)."""
    pair = await _pair(ctx, user_id, character_id)
    try:
        return StopOut(gestoppt=await _controls(ctx).stop(pair))
    except TurnControlError as exc:
        raise _refused(exc) from None
