"""Who the page is signed in as, and how that person wants to be known
(docs/behaviour/web.md#who-you-are):

- `GET /me` — the caller's user id and whether this request carries the local page token
  (`lokal`: the single-user default a loopback page gets without asking for a key), so the
  page can say on screen whom it talks as
- `GET /persona`, `PUT /persona` — the caller's persona: a name and a short description
  the characters know the person by; both empty removes it

One person, one history: every token of a user (the page's, one made in the settings, one
from `novaberg user add`) talks to the same conversations.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field, StringConstraints

from novaberg.api.auth import current_identity
from novaberg.api.context import Ctx
from novaberg.api.errors import AUTH, BODY
from novaberg.api.fields import NO_NUL, NoNul
from novaberg.store.user_persona import (
    DESCRIPTION_MAX,
    NAME_MAX,
    UserPersona,
    load_persona,
    save_persona,
)
from novaberg.store.users import hash_token

router = APIRouter(tags=["identity"], responses={**AUTH})

Identity = Annotated[tuple[str, str], Depends(current_identity)]


class MeOut(BaseModel):
    nutzer: str = Field(description="The user id this token belongs to.")
    lokal: bool = Field(
        description="True when this is the local page token: the single-user default of a "
        "loopback page (NOVABERG_DEFAULT_USER), no key needed."
    )


class PersonaBody(BaseModel):
    name: Annotated[str, StringConstraints(max_length=NAME_MAX, pattern=NO_NUL), NoNul] = Field(
        default="", description="What the characters call you; empty: your user id."
    )
    beschreibung: Annotated[
        str, StringConstraints(max_length=DESCRIPTION_MAX, pattern=NO_NUL), NoNul
    ] = Field(default="", description="A few words about you the characters keep in mind.")


def _page_digest(request: Request) -> str:
    services = getattr(request.app.state, "chat", None)
    token = getattr(services, "page_token", None)
    return hash_token(token) if token else ""


@router.get("/me", response_model=MeOut, summary="Whom this token signs in as")
async def get_me(identity: Identity, request: Request) -> MeOut:
    user_id, digest = identity
    local = _page_digest(request)
    return MeOut(nutzer=user_id, lokal=bool(local) and digest == local)


def _out(persona: UserPersona | None) -> PersonaBody:
    if persona is None:
        return PersonaBody()
    return PersonaBody(name=persona.name, beschreibung=persona.description)


@router.get("/persona", response_model=PersonaBody, summary="Your persona (empty: unset)")
async def get_persona(identity: Identity, ctx: Ctx) -> PersonaBody:
    return _out(await load_persona(ctx.pool, identity[0]))


@router.put(
    "/persona",
    response_model=PersonaBody,
    responses={**BODY},
    summary="Set your persona (both fields empty: remove it)",
)
async def put_persona(body: PersonaBody, identity: Identity, ctx: Ctx) -> PersonaBody:
    stored = await save_persona(ctx.pool, identity[0], UserPersona(body.name, body.beschreibung))
    return _out(stored)
