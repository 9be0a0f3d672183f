"""A person's linked channels (docs/behaviour/reach.md#linking).

- `GET /kanaele` — the caller's linked chats and push subscriptions (api/push_api.py): kind, which character, since when, and
  whether one failed for good (`gestoert_am`, `stoerung`)
- `POST /kanaele/telegram/code` — a one-time code to send to the bot as `/start CODE`
  (what `novaberg telegram link` prints), for the page to show
- `DELETE /kanaele/{id}` — unlink a chat or a device: nothing more goes there, and a
  chat's messages are no longer taken until it is linked again

Another user's link id is a 404 like an id that does not exist.
"""

from __future__ import annotations

import contextlib
import json
from datetime import datetime
from typing import Annotated, Final
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, HTTPException, Path, Response
from pydantic import BaseModel, Field

from novaberg.api.auth import current_user
from novaberg.api.context import Ctx
from novaberg.api.errors import AUTH, BODY, ITEM
from novaberg.reach.linking import new_code
from novaberg.store import channel_links, keys

router = APIRouter(tags=["kanaele"], responses={**AUTH})

User = Annotated[str, Depends(current_user)]

MAX_LINK_ID: Final = 2**63 - 1
"""Link ids are BIGSERIAL; a larger number is no id (422, not a database error)."""


class LinkOut(BaseModel):
    id: int
    art: str = Field(description="The channel kind: telegram or push.")
    character_id: str = Field(description="Who the chat talks to (/character changes it).")
    gestoert_am: datetime | None = Field(description="When it failed for good (e.g. blocked).")
    stoerung: str | None
    dienst: str | None = Field(
        default=None,
        description="A push subscription's push service (host), to tell devices apart.",
    )


def link_out(link: channel_links.ChannelLink) -> LinkOut:
    """A link as the caller sees it; a subscription's keys and URL stay on the server."""
    service = None
    if link.kind == channel_links.PUSH:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            service = urlsplit(json.loads(link.target)["endpoint"]).hostname
    return LinkOut(
        id=link.id,
        art=link.kind,
        character_id=link.character_id,
        gestoert_am=link.failed_at,
        stoerung=link.failure,
        dienst=service,
    )


class CodeOut(BaseModel):
    code: str
    gueltig_s: int = Field(description="Seconds the code stays valid; it works once.")
    befehl: str = Field(description="What to send to the bot.")


@router.get("/kanaele", response_model=list[LinkOut], summary="Your linked chats")
async def get_links(user_id: User, ctx: Ctx) -> list[LinkOut]:
    return [link_out(link) for link in await channel_links.of_user(ctx.pool, user_id)]


@router.post(
    "/kanaele/telegram/code",
    response_model=CodeOut,
    responses=BODY,
    summary="A one-time code that links a Telegram chat to you",
)
async def post_code(user_id: User, ctx: Ctx) -> CodeOut:
    code = await new_code(ctx.redis, user_id)
    return CodeOut(code=code, gueltig_s=keys.LINK_CODE_TTL, befehl=f"/start {code}")


@router.delete(
    "/kanaele/{link_id}",
    status_code=204,
    responses={**BODY, **ITEM},
    summary="Unlink a chat",
)
async def delete_link(
    link_id: Annotated[int, Path(ge=1, le=MAX_LINK_ID)], user_id: User, ctx: Ctx
) -> Response:
    if not await channel_links.unlink(ctx.pool, ctx.redis, user_id, link_id):
        raise HTTPException(
            404, detail={"fehler": "nicht_gefunden", "detail": f"no link {link_id} of yours"}
        )
    return Response(status_code=204)
