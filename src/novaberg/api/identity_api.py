"""How the signed-in person wants to be known (docs/behaviour/web.md#your-persona):

- `GET /persona`, `PUT /persona` — the caller's persona: a name and a short description
  the characters know the person by; both empty removes it

Whom a token signs in as (and whether it is the local page token) is `GET /chat/me`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
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

router = APIRouter(tags=["identity"], responses={**AUTH})

Identity = Annotated[tuple[str, str], Depends(current_identity)]


class PersonaBody(BaseModel):
    name: Annotated[str, StringConstraints(max_length=NAME_MAX, pattern=NO_NUL), NoNul] = Field(
        default="", description="What the characters call you; empty: your user id."
    )
    beschreibung: Annotated[
        str, StringConstraints(max_length=DESCRIPTION_MAX, pattern=NO_NUL), NoNul
    ] = Field(default="", description="A few words about you the characters keep in mind.")


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
