"""A signed-in person's own API tokens (docs/behaviour/events.md#revoked-tokens).

- `POST /tokens` — a new token for the caller, for another app (SillyTavern, Open WebUI,
  `novaberg chat`): it belongs to the same person, so those apps continue the page's
  conversation; the token is in this answer once and never again
- `GET /tokens` — the caller's tokens: id, label, when created, and which one this request
  carries (`aktuell`); never a token or its hash
- `DELETE /tokens/{token_id}` — revoke one of them (the calling one too): from the next
  request on it is refused in every API process, and its open sockets close with 4401

Another user's token id is a 404 like an id that does not exist: ids reveal nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final

from fastapi import APIRouter, Depends, HTTPException, Path, Request, Response
from pydantic import BaseModel, Field, StringConstraints

from novaberg.api.auth import current_identity
from novaberg.api.context import Ctx
from novaberg.api.errors import AUTH, BODY, ITEM
from novaberg.api.fields import NOT_BLANK, NoNul
from novaberg.api.revocation import revoke_here_and_everywhere
from novaberg.store.users import issue_token, list_tokens, revoke_token_id

router = APIRouter(tags=["tokens"], responses={**AUTH})

Identity = Annotated[tuple[str, str], Depends(current_identity)]

MAX_TOKEN_ID: Final = 2**63 - 1
"""Token ids are BIGSERIAL; a larger number is no id (422, not a database error)."""


class TokenOut(BaseModel):
    id: int
    label: str
    erstellt_am: datetime
    aktuell: bool = Field(description="True for the token this request was made with.")


LABEL_MAX: Final = 100
"""A label names an app or a device ("SillyTavern", "laptop"), not a story."""

Label = Annotated[
    str, StringConstraints(min_length=1, max_length=LABEL_MAX, pattern=NOT_BLANK), NoNul
]


class NewToken(BaseModel):
    label: Label = Field(description="What the token is for, shown in the list (e.g. the app).")


class IssuedTokenOut(BaseModel):
    id: int
    label: str
    erstellt_am: datetime
    token: str = Field(description="The token itself: shown this once, stored only as a hash.")


@router.post(
    "/tokens",
    status_code=201,
    response_model=IssuedTokenOut,
    responses={**BODY},
    summary="A new token of yours for another app (shown once)",
)
async def post_token(body: NewToken, identity: Identity, ctx: Ctx) -> IssuedTokenOut:
    user_id, _ = identity
    issued = await issue_token(ctx.pool, user_id, body.label.strip())
    (row,) = [t for t in await list_tokens(ctx.pool, user_id) if t.token_id == issued.token_id]
    return IssuedTokenOut(
        id=issued.token_id, label=issued.label, erstellt_am=row.created_at, token=issued.token
    )


@router.get("/tokens", response_model=list[TokenOut], summary="Your API tokens")
async def get_tokens(identity: Identity, ctx: Ctx) -> list[TokenOut]:
    user_id, digest = identity
    return [
        TokenOut(id=t.token_id, label=t.label, erstellt_am=t.created_at, aktuell=t.digest == digest)
        for t in await list_tokens(ctx.pool, user_id)
    ]


@router.delete(
    "/tokens/{token_id}",
    status_code=204,
    responses={**BODY, **ITEM},
    summary="Revoke one of your tokens at once (its sockets close with 4401)",
)
async def delete_token(
    token_id: Annotated[int, Path(ge=1, le=MAX_TOKEN_ID)],
    identity: Identity,
    ctx: Ctx,
    request: Request,
) -> Response:
    user_id, _ = identity
    revoked = await revoke_token_id(ctx.pool, user_id, token_id)
    if not revoked:
        raise HTTPException(
            404, detail={"fehler": "nicht_gefunden", "detail": f"no token {token_id} of yours"}
        )
    chat = request.app.state.chat
    await revoke_here_and_everywhere(chat.tokens, chat.hub, ctx.redis, [t.digest for t in revoked])
    return Response(status_code=204)
