"""The caller's chats with one character (docs/behaviour/web.md#chats): threads of the
pair's conversation. Her memory stays one per pair; a chat groups the history the page
shows, and the open chat is where the pair's next turns go.

- `GET /chats?character_id=` — the pair's chats, newest first, the open one marked
- `POST /chats` — a new, empty chat, opened (her running conversation starts afresh)
- `GET /chats/{chat_id}` — one chat; `PATCH` renames it, `DELETE` hides it and its turns
- `POST /chats/{chat_id}/open` — switch to it: the next turns go there
- `GET /chats/{chat_id}/history?vor=&limit=` — its turns, paged like `GET /history`
- `GET /chats/{chat_id}/export?format=md|json` — the whole chat as a download

Another user's chat is answered like an unknown one: 404 `chat_unbekannt`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Response
from pydantic import BaseModel, Field

from novaberg.api import chat_export
from novaberg.api.characters_api import NOT_FOUND as CHARACTER_NOT_FOUND
from novaberg.api.characters_api import unknown_character
from novaberg.api.errors import AUTH, BODY, ErrorOut
from novaberg.api.fields import NO_NUL
from novaberg.api.memory import Context, User
from novaberg.api.page_api import HISTORY_PAGE, HistoryPage, history_entry
from novaberg.pair import Pair
from novaberg.store import characters, chats, session
from novaberg.store.chats import TITLE_MAX, Chat, ChatSummary
from novaberg.store.conversation_history import read_history

router = APIRouter(tags=["chats"], responses={**AUTH})

UNKNOWN_CHAT: Final = "chat_unbekannt"
NOT_FOUND: Final[dict[int | str, dict[str, Any]]] = {
    404: {"model": ErrorOut, "description": f"{UNKNOWN_CHAT}: no such chat of the caller"}
}
EXPORT_PAGE: Final = 500
"""History rows read per round trip while exporting a chat."""

ChatId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]
CharacterQuery = Annotated[
    str, Query(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$", alias="character_id")
]


class ChatOut(BaseModel):
    id: str
    character_id: str
    titel: str = Field(
        description="Its name: the person's own, else its first message's first words."
    )
    eigener_titel: bool = Field(description="The person named it (else `titel` is derived).")
    turns: int = Field(description="Answered and failed turns it holds.")
    erstellt_am: datetime
    zuletzt_am: datetime | None = Field(description="When its newest turn was written.")
    aktuell: bool = Field(description="The open chat: the pair's next turns go here.")


class ChatList(BaseModel):
    chats: list[ChatOut] = Field(description="Newest first.")
    aktuell: str = Field(description="The open chat's id.")


class NewChat(BaseModel):
    character_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    titel: str | None = Field(default=None, max_length=TITLE_MAX, pattern=NO_NUL)


class Rename(BaseModel):
    titel: str | None = Field(
        max_length=TITLE_MAX,
        pattern=NO_NUL,
        description="The new name; null or empty: its first words again.",
    )


class Deleted(BaseModel):
    aktuell: str = Field(description="The pair's open chat after the deletion.")


def _out(item: ChatSummary) -> ChatOut:
    return ChatOut(
        id=item.chat.id,
        character_id=item.chat.pair.character_id,
        titel=item.title,
        eigener_titel=bool(item.chat.title),
        turns=item.turns,
        erstellt_am=item.chat.created_at,
        zuletzt_am=item.last_at,
        aktuell=item.current,
    )


def unknown_chat(chat_id: str) -> HTTPException:
    return HTTPException(
        404, detail={"fehler": UNKNOWN_CHAT, "detail": f"unknown chat {chat_id!r}"}
    )


async def _pair(ctx: Context, user_id: str, character_id: str) -> Pair:
    async with ctx.pool.connection() as conn:
        if not await characters.is_visible(conn, user_id, character_id):
            raise unknown_character(character_id)
    return Pair(user_id, character_id)


async def _chat(ctx: Context, user_id: str, chat_id: str) -> Chat:
    found = await chats.find(ctx.pool, user_id, chat_id)
    if found is None:
        raise unknown_chat(chat_id)
    return found


@router.get(
    "/chats", response_model=ChatList, responses=CHARACTER_NOT_FOUND, summary="A pair's chats"
)
async def list_chats(character_id: CharacterQuery, user_id: User, ctx: Context) -> ChatList:
    """The caller's chats with the character (a pair that never had one gets its first here,
    holding the conversation so far)."""
    pair = await _pair(ctx, user_id, character_id)
    items = await chats.list_chats(ctx.pool, pair)
    current = next((item.chat.id for item in items if item.current), items[0].chat.id)
    return ChatList(chats=[_out(item) for item in items], aktuell=current)


@router.post(
    "/chats",
    status_code=201,
    response_model=ChatOut,
    responses={**CHARACTER_NOT_FOUND, **BODY},
    summary="Start a new chat",
)
async def create_chat(body: NewChat, user_id: User, ctx: Context) -> ChatOut:
    """A new, empty chat, opened: her running conversation ends (as after hours of quiet);
    what she remembers of the pair stays."""
    pair = await _pair(ctx, user_id, body.character_id)
    chat = await chats.create(ctx.pool, pair, (body.titel or "").strip() or None)
    await session.end_session(ctx.redis, pair)
    return _out(await chats.summary(ctx.pool, chat))


@router.get("/chats/{chat_id}", response_model=ChatOut, responses=NOT_FOUND, summary="One chat")
async def get_chat(chat_id: ChatId, user_id: User, ctx: Context) -> ChatOut:
    return _out(await chats.summary(ctx.pool, await _chat(ctx, user_id, chat_id)))


@router.patch(
    "/chats/{chat_id}",
    response_model=ChatOut,
    responses={**NOT_FOUND, **BODY},
    summary="Rename a chat",
)
async def rename_chat(chat_id: ChatId, body: Rename, user_id: User, ctx: Context) -> ChatOut:
    chat = await _chat(ctx, user_id, chat_id)
    renamed = await chats.rename(ctx.pool, chat, (body.titel or "").strip() or None)
    return _out(await chats.summary(ctx.pool, renamed))


@router.delete(
    "/chats/{chat_id}", response_model=Deleted, responses=NOT_FOUND, summary="Delete a chat"
)
async def delete_chat(chat_id: ChatId, user_id: User, ctx: Context) -> Deleted:
    """The chat and its turns leave the list, the export and the page; what she remembers
    of them stays (memory is the pair's: forget single memories in the memory panel). The
    open chat passes to the newest other one, or to a new empty one."""
    chat = await _chat(ctx, user_id, chat_id)
    if await chats.delete(ctx.pool, chat):
        await session.end_session(ctx.redis, chat.pair)
    spans = await chats.spans(ctx.pool, chat.pair)
    return Deleted(aktuell=chats.current_of(spans))


@router.post(
    "/chats/{chat_id}/open", response_model=ChatOut, responses=NOT_FOUND, summary="Switch to a chat"
)
async def open_chat(chat_id: ChatId, user_id: User, ctx: Context) -> ChatOut:
    """The pair's next turns go to this chat. Switching ends her running conversation (the
    prompt's recent turns are the open chat's); opening the open chat changes nothing."""
    chat = await _chat(ctx, user_id, chat_id)
    if await chats.open_chat(ctx.pool, chat):
        await session.end_session(ctx.redis, chat.pair)
    return _out(await chats.summary(ctx.pool, chat))


@router.get(
    "/chats/{chat_id}/history",
    response_model=HistoryPage,
    responses=NOT_FOUND,
    summary="One chat's history",
)
async def chat_history(
    chat_id: ChatId,
    user_id: User,
    ctx: Context,
    vor: Annotated[
        int | None, Query(ge=1, le=2**62, description="Only turns with an id below this one.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = HISTORY_PAGE,
) -> HistoryPage:
    """The chat's turns, newest page first, each page oldest first (as `GET /history`)."""
    chat = await _chat(ctx, user_id, chat_id)
    spans = await chats.read_spans(ctx.pool, chat.pair)
    rows = await read_history(
        ctx.pool,
        chat.pair,
        before_id=vor,
        limit=limit + 1,
        ranges=chats.ranges_of(spans, chat.id),
    )
    page = rows[:limit]
    return HistoryPage(
        eintraege=[history_entry(r) for r in reversed(page)], weitere=len(rows) > limit
    )


EXPORT_TYPES: Final = {"md": "text/markdown; charset=utf-8", "json": "application/json"}


@router.get(
    "/chats/{chat_id}/export",
    response_class=Response,
    responses={
        **NOT_FOUND,
        200: {
            "content": {"text/markdown": {}, "application/json": {}},
            "description": "The whole chat as a file (Content-Disposition: attachment).",
        },
    },
    summary="Export a chat as Markdown or JSON",
)
async def export_chat(
    chat_id: ChatId,
    user_id: User,
    ctx: Context,
    format: Annotated[Literal["md", "json"], Query(description="md or json")] = "md",
    sprache: Annotated[
        Literal["de", "en"], Query(description="Language of the Markdown's few words.")
    ] = "de",
) -> Response:
    chat = await _chat(ctx, user_id, chat_id)
    ranges = chats.ranges_of(await chats.read_spans(ctx.pool, chat.pair), chat.id)
    rows: list[dict[str, Any]] = []
    before: int | None = None
    while True:
        page = await read_history(
            ctx.pool, chat.pair, before_id=before, limit=EXPORT_PAGE, ranges=ranges
        )
        rows.extend(page)
        if len(page) < EXPORT_PAGE:
            break
        before = int(page[-1]["id"])
    entries = [history_entry(r) for r in reversed(rows)]
    async with ctx.pool.connection() as conn:
        character = await characters.visible(conn, user_id, chat.pair.character_id)
    summary = await chats.summary(ctx.pool, chat)
    header = chat_export.ExportHeader(
        chat_id=chat.id,
        title=summary.title,
        character_id=chat.pair.character_id,
        character_name=character.name if character else chat.pair.character_id,
        user_id=user_id,
        created_at=chat.created_at,
        exported_at=datetime.now(UTC),
    )
    items = chat_export.messages(entries)
    body = (
        chat_export.as_json(header, items)
        if format == "json"
        else chat_export.as_markdown(header, items, sprache)
    )
    filename = f"{chat.pair.character_id}-{chat.id}.{format}"
    return Response(
        body,
        media_type=EXPORT_TYPES[format],
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
