"""Read endpoints the chat page needs beyond memory and agents (docs/behaviour/web.md#the-page):

- `GET /history/{character_id}` — the open chat's conversation (api/chats_api.py), paged
  backwards, across reloads and devices: the answered turns the dispatcher recorded for
  good, and the failed ones with their reason and the texts to send again
- `GET /characters/{character_id}/avatar` — the picture of an imported card (PNG), for the
  character picker; 404 when the character has none (the page draws an initial then)
- `GET /page/settings` — time zone, the model in use, whether it is the bundled demo model,
  the emotion wheel the page draws its radar with, and the longest message it may send

Read-only and scoped to the caller.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Response
from pydantic import BaseModel, Field

from novaberg.api.auth import current_user
from novaberg.api.context import AppContext, get_context
from novaberg.api.errors import AUTH, ErrorOut
from novaberg.config import LLMBackend, Role, Settings
from novaberg.ei.canon import NEUTRAL, SECTOR_COUNT, SECTORS
from novaberg.events.model import MAX_PROMPT_BYTES
from novaberg.llm.connection import effective_settings
from novaberg.llm.local import BUNDLED_NAME
from novaberg.pair import Pair
from novaberg.store import characters, chats
from novaberg.store.conversation_history import read_history
from novaberg.store.model_connection import read_connection
from novaberg.store.pipeline_log import KIND_FAILED_TURN
from novaberg.wire import ORIGIN_USER

router = APIRouter(tags=["page"], responses={**AUTH})

CharacterId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]
User = Annotated[str, Depends(current_user)]
Context = Annotated[AppContext, Depends(get_context)]

HISTORY_PAGE: Final = 30
"""Turns per history page when the client does not say: a screenful or two."""

DEMO_HINT: Final = (
    "NOVABERG_LLM_URL=http://localhost:11434/v1 NOVABERG_LLM_MODEL=llama3.1 make serve"
)
"""The one line that connects a real (OpenAI-compatible) model; README: Use a real model."""


class HistoryEntry(BaseModel):
    id: int = Field(description="Row id; pass the smallest one seen as `vor` for older turns.")
    turn_id: str | None
    zeit: float = Field(description="When the answer was recorded (epoch seconds).")
    eingabe: str = Field(description="What the turn reacted to: the user's text or own thought.")
    nachricht: str = Field(description='The character\'s answer ("" for a failed turn).')
    reiz_herkunft: str
    gescheitert: bool = Field(default=False, description="The turn ended without an answer.")
    grund: str | None = Field(default=None, description="Why it failed (`turn_gescheitert`).")
    eingaben: list[str] = Field(
        default_factory=list, description="A failed turn's texts, one per utterance: to resend."
    )
    emotion: str | None
    arousal: float | None
    user_emotion: str | None
    user_arousal: float | None


class HistoryPage(BaseModel):
    eintraege: list[HistoryEntry] = Field(description="Oldest first.")
    weitere: bool = Field(description="Whether older turns exist before the first entry.")


class PageSettings(BaseModel):
    zeitzone: str
    backend: str
    modell: str
    demo_modell: bool = Field(description="The bundled tiny model answers: demo quality.")
    demo_hinweis: str = Field(description="How to connect a real model (one line).")
    emotionsrad: dict[str, int] = Field(description="Sector (1-8) of each canonical emotion.")
    sektoren: int
    text_max_bytes: int = Field(
        description="The longest message `POST /chat` accepts, in UTF-8 bytes (the page "
        "counts and warns against it while the person types)."
    )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def history_entry(row: dict[str, Any]) -> HistoryEntry:
    """One `turn_roh` or `turn_gescheitert` row as the page shows it; missing emotions stay
    null."""
    inhalt = row.get("inhalt") or {}
    created: datetime = row["erstellt_am"]
    if row.get("art") == KIND_FAILED_TURN:
        texts = [t for t in inhalt.get("eingaben") or [] if isinstance(t, str)]
        return HistoryEntry(
            id=row["id"],
            turn_id=row.get("turn_id"),
            zeit=created.timestamp(),
            eingabe=str(inhalt.get("user_prompt") or ""),
            nachricht="",
            reiz_herkunft=ORIGIN_USER,
            gescheitert=True,
            grund=str(inhalt.get("grund") or ""),
            eingaben=texts,
            emotion=None,
            arousal=None,
            user_emotion=None,
            user_arousal=None,
        )
    nova = inhalt.get("nova_emotion") or {}
    user = inhalt.get("user_emotion") or {}
    return HistoryEntry(
        id=row["id"],
        turn_id=row.get("turn_id"),
        zeit=created.timestamp(),
        eingabe=str(inhalt.get("user_prompt") or ""),
        nachricht=str(inhalt.get("response") or ""),
        reiz_herkunft=str(inhalt.get("herkunft") or ORIGIN_USER),
        emotion=_text(nova.get("emotion")),
        arousal=_number(nova.get("arousal")),
        user_emotion=_text(user.get("emotion")),
        user_arousal=_number(user.get("arousal")),
    )


def newest_per_turn(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows (newest first) with only the newest of each turn id: a regenerated turn
    (events/turn_controls.py) may briefly have its old row too, until it is deleted."""
    seen: set[str] = set()
    kept = []
    for row in rows:
        turn = row.get("turn_id")
        if turn and turn in seen:
            continue
        seen.add(turn or "")
        kept.append(row)
    return kept


@router.get("/history/{character_id}", response_model=HistoryPage, summary="Conversation history")
async def history(
    character_id: CharacterId,
    user_id: User,
    ctx: Context,
    vor: Annotated[
        int | None, Query(ge=1, le=2**62, description="Only turns with an id below this one.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = HISTORY_PAGE,
) -> HistoryPage:
    """The caller's turns with this character in the open chat, newest page first, each page
    oldest first: answered ones, and failed ones (`gescheitert`, with `grund` and `eingaben`)."""
    pair = Pair(user_id, character_id)
    spans = await chats.read_spans(ctx.pool, pair)
    rows = await read_history(
        ctx.pool, pair, before_id=vor, limit=limit + 1, ranges=chats.open_ranges(spans)
    )
    page = newest_per_turn(rows[:limit])
    return HistoryPage(
        eintraege=[history_entry(r) for r in reversed(page)], weitere=len(rows) > limit
    )


AVATAR_HEADERS: Final = {
    "Cache-Control": "private, max-age=300",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'",
}
"""An uploaded picture is served as an image only: never sniffed, never a document."""


@router.get(
    "/characters/{character_id}/avatar",
    summary="The character's picture",
    response_class=Response,
    responses={
        200: {"content": {"image/png": {}}, "description": "The card's picture."},
        404: {
            "model": ErrorOut,
            "description": "kein_avatar: none was imported, or no such character of the caller",
        },
    },
)
async def character_avatar(character_id: CharacterId, user_id: User, ctx: Context) -> Response:
    async with ctx.pool.connection() as conn:
        found = await characters.avatar(conn, user_id, character_id)
    if found is None:
        raise HTTPException(
            404, detail={"fehler": "kein_avatar", "detail": f"{character_id} has no picture"}
        )
    picture, media_type = found
    return Response(picture, media_type=media_type, headers=AVATAR_HEADERS)


def page_settings(settings: Settings) -> PageSettings:
    """What the settings panel shows; `demo_modell` when the bundled GGUF answers."""
    backend = settings.llm_backend
    if backend is LLMBackend.LOCAL:
        path = settings.local_model_path
        model = path.name if path is not None else BUNDLED_NAME
        demo = path is None
    else:
        model = settings.model_for(Role.CHAT) if backend is LLMBackend.OPENAI else "scripted"
        demo = False
    wheel = dict(SECTORS)
    wheel[NEUTRAL] = 0
    return PageSettings(
        zeitzone=settings.timezone,
        backend=backend.value,
        modell=model,
        demo_modell=demo,
        demo_hinweis=DEMO_HINT,
        emotionsrad=wheel,
        sektoren=SECTOR_COUNT,
        text_max_bytes=MAX_PROMPT_BYTES,
    )


@router.get("/page/settings", response_model=PageSettings, summary="What the page shows")
async def settings_view(user_id: User, ctx: Context) -> PageSettings:
    return page_settings(effective_settings(ctx.settings, await read_connection(ctx.pool)))
