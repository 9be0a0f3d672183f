"""`GET /memory/{character_id}/search?q=…&limit=…`: the hybrid memory search for the page and
clients, answering the objects `novaberg memory search --json` prints (memory/search/results.py).
No model call but the query's embedding; scoped to the caller's pair."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from novaberg.api.errors import AUTH
from novaberg.api.fields import NO_NUL, NoNul
from novaberg.api.memory import CharacterId, Context, User
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import SearchOptions
from novaberg.pair import Pair

router = APIRouter(tags=["memory"], responses={**AUTH})

QUERY_MAX_CHARS = 1_000


@router.get("/memory/{character_id}/search")
async def memory_search(
    character_id: CharacterId,
    user_id: User,
    ctx: Context,
    q: Annotated[str, Query(min_length=1, max_length=QUERY_MAX_CHARS, pattern=NO_NUL), NoNul],
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    inaktive: Annotated[bool, Query(description="Include decayed long-term nodes.")] = False,
) -> dict[str, Any]:
    """Hits of the archive, short- and long-term memory and the library, fused: each with
    `layer`, `score`, `text`, `time` and `sources` (the turns, nachrichten_ids and imported
    ids it rests on; a library passage's file, page, heading and lines).
    `zeitfenster`: the time window a time expression in `q` narrowed to, else null."""
    result = await search_memory(
        ctx.redis,
        ctx.pool,
        ctx.model,
        Pair(user_id, character_id),
        q,
        now=datetime.now(UTC),
        tz=ctx.settings.tz,
        options=SearchOptions(limit=limit, include_inactive=inaktive),
    )
    return {
        "hits": [hit.as_json(rank) for rank, hit in enumerate(result.hits, start=1)],
        "zeitfenster": result.window.as_json() if result.window else None,
        "vektor": result.embedded,
    }
