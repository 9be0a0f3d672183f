"""`POST /characters/{character_id}/opening` — the card greeting the person answers becomes
the conversation's opening.

The page shows a card's greetings on an empty conversation (the first and its alternates,
browsable). Until the person writes, a greeting is only shown. When they answer, the page
names the greeting they saw (`begruessung`: 0 the first, 1… the alternates) before it sends
the message, and the server records it as the character's first words: in the history (an
answer without a stimulus, `reiz_herkunft` eroeffnung) and in the session, so the model
knows what "she" said when it reads the person's answer. The text is the server's (the card's
greeting with `{{char}}`/`{{user}}` filled in as for the persona), never the page's; a
conversation that has begun already keeps its beginning (`gespeichert: false`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from novaberg.api.characters_api import NOT_FOUND, unknown_character
from novaberg.api.errors import AUTH, BODY, refused_or_invalid
from novaberg.api.memory import CharacterId, Context, User
from novaberg.pair import Pair
from novaberg.store import characters, conversation_history, session
from novaberg.store.characters import Character
from novaberg.wire import ORIGIN_OPENING, ROLE_ASSISTANT

router = APIRouter(tags=["characters"], responses={**AUTH})

NO_SUCH_GREETING: Final = "begruessung_unbekannt"
_MACROS: Final = (
    (re.compile(r"\{\{char\}\}|<bot>", re.IGNORECASE), "char"),
    (re.compile(r"\{\{user\}\}|<user>", re.IGNORECASE), "user"),
)


class OpeningIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    begruessung: StrictInt = Field(
        ge=0, le=64, description="Which greeting the person saw: 0 the first, 1… the alternates."
    )


class OpeningOut(BaseModel):
    gespeichert: bool = Field(
        description="True: recorded as the opening; false: the conversation had begun already."
    )
    text: str = Field(description="The greeting as recorded (names filled in).")


def greetings(found: Character) -> list[str]:
    """The card's greetings as the page numbers them: the first, then the alternates, blank
    ones left out."""
    texts = [found.first_message, *found.alternate_greetings]
    return [text.strip() for text in texts if text.strip()]


def filled(text: str, character_name: str, user_id: str) -> str:
    names = {"char": character_name, "user": user_id}
    for pattern, whose in _MACROS:
        name = names[whose]
        text = pattern.sub(lambda _match: name, text)  # noqa: B023 - used at once
    return text


@router.post(
    "/characters/{character_id}/opening",
    response_model=OpeningOut,
    responses={
        **BODY,
        **NOT_FOUND,
        422: refused_or_invalid(f"{NO_SUCH_GREETING}: the character has no such greeting"),
    },
    summary="Record the greeting the person answers as the conversation's opening",
)
async def record_opening(
    character_id: CharacterId, body: OpeningIn, user_id: User, ctx: Context
) -> OpeningOut:
    async with ctx.pool.connection() as conn:
        found = await characters.visible(conn, user_id, character_id)
    if found is None:
        raise unknown_character(character_id)
    texts = greetings(found)
    if body.begruessung >= len(texts):
        raise HTTPException(
            422,
            detail={
                "fehler": NO_SUCH_GREETING,
                "detail": f"{character_id!r} has {len(texts)} greeting(s)",
            },
        )
    text = filled(texts[body.begruessung], found.name, user_id)
    pair = Pair(user_id, character_id)
    now = datetime.now(UTC)
    async with ctx.pool.connection() as conn, conn.transaction():
        recorded = await conversation_history.add_opening(conn, pair, text, now)
    if recorded:
        turn = {
            "rolle": ROLE_ASSISTANT,
            "inhalt": text,
            "zeit": now.timestamp(),
            "herkunft": ORIGIN_OPENING,
            "turn_id": None,
            "nachrichten_ids": [],
        }
        await session.append_turn(ctx.redis, pair, turn)
    return OpeningOut(gespeichert=recorded, text=text)
