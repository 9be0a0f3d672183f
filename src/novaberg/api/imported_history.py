"""`GET /history/{character_id}/importiert` — the chats imported for the caller's pair with a
character, for the page's conversation: it shows them before the live turns (the history of
`GET /history/{character_id}` is what was said here), each marked as imported with its
speaker's name. Imported turns were archived (and can be searched and distilled,
docs/behaviour/memory.md#imports); this only reads them. Newest page first, each page oldest
first; `vor` is the smallest id seen.
"""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from novaberg.api.errors import AUTH
from novaberg.api.memory import CharacterId, Context, User
from novaberg.pair import Pair
from novaberg.store.archive import SPEAKER_CHARACTER, SPEAKER_USER
from novaberg.store.imported_turns import ImportedTurn, read_imported

router = APIRouter(tags=["page"], responses={**AUTH})

PAGE_DEFAULT: Final = 30


class ImportedEntry(BaseModel):
    id: int = Field(description="Row id; pass the smallest one seen as `vor` for older turns.")
    sprecher: str = Field(description=f"{SPEAKER_USER!r} or {SPEAKER_CHARACTER!r}.")
    name: str | None = Field(description="The speaker's name as the export gave it, if it did.")
    text: str
    zeit: float = Field(description="When it was said, by the export (epoch seconds).")
    quelle: str = Field(description="The export's format (sillytavern, jsonl, …).")


class ImportedPage(BaseModel):
    eintraege: list[ImportedEntry] = Field(description="Oldest first.")
    weitere: bool = Field(description="Whether older imported turns exist.")


def _entry(turn: ImportedTurn) -> ImportedEntry:
    return ImportedEntry(
        id=turn.row_id,
        sprecher=turn.speaker,
        name=turn.name,
        text=turn.text,
        zeit=turn.time.timestamp(),
        quelle=turn.source,
    )


@router.get(
    "/history/{character_id}/importiert",
    response_model=ImportedPage,
    summary="Imported chats of the conversation",
)
async def imported_history(
    character_id: CharacterId,
    user_id: User,
    ctx: Context,
    vor: Annotated[
        int | None, Query(ge=1, le=2**62, description="Only turns with an id below this one.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = PAGE_DEFAULT,
) -> ImportedPage:
    turns = await read_imported(
        ctx.pool, Pair(user_id, character_id), before_id=vor, limit=limit + 1
    )
    page = turns[:limit]
    return ImportedPage(eintraege=[_entry(t) for t in reversed(page)], weitere=len(turns) > limit)
