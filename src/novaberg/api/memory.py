"""Read APIs of the memory for the chat page's panels and for people
(docs/behaviour/memory.md#looking-inside).

Every route is scoped to the caller (`current_user`) and one character, i.e. one pair:

- `GET /memory/{character_id}/session` — session turns (embeddings left out) and summary
- `GET /memory/{character_id}/short_term` — short-term entries: salience, themes, TTL left
- `DELETE /memory/{character_id}/short_term/{key}` — forget one short-term entry
- `GET /memory/{character_id}/long_term` — long-term nodes: weights, last reinforced/used
- `GET /memory/{character_id}/goals` — the character's goals toward the caller
- `GET /memory/{character_id}/profiles` — both distilled profiles (user, character)
- `GET /pipeline/{turn_id}` — the pipeline log of one of the caller's turns

Reading changes nothing (reading a panel is not a retrieval, so it does not reinforce
long-term nodes); the one write is forgetting a short-term entry the person points at.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Response

from novaberg.api.auth import current_user
from novaberg.api.context import AppContext, get_context
from novaberg.api.errors import AUTH, ITEM
from novaberg.api.fields import MAX_OFFSET, NO_NUL, NoNul
from novaberg.ei.canon import parse_number
from novaberg.store import character_profiles, goals, lzg
from novaberg.store.keys import Pair
from novaberg.store.kzg import KzgStore
from novaberg.store.pipeline_log import read_turn
from novaberg.store.session import read_summary, read_turns

router = APIRouter(tags=["memory"], responses={**AUTH, **ITEM})

CharacterId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]
User = Annotated[str, Depends(current_user)]
Context = Annotated[AppContext, Depends(get_context)]

SESSION_HIDDEN: Final = frozenset({"embedding"})
"""Turn fields not sent to clients (large and meaningless to read)."""


def _pair(user_id: str, character_id: str) -> Pair:
    return Pair(user_id, character_id)


@router.get("/memory/{character_id}/session")
async def session_view(
    character_id: CharacterId,
    user_id: User,
    ctx: Context,
) -> dict[str, Any]:
    """The running conversation, oldest first, and the summary of what was trimmed."""
    pair = _pair(user_id, character_id)
    turns = await read_turns(ctx.redis, pair)
    return {
        "turns": [{k: v for k, v in t.items() if k not in SESSION_HIDDEN} for t in turns],
        "summary": await read_summary(ctx.redis, pair),
    }


@router.get("/memory/{character_id}/short_term")
async def short_term_view(
    character_id: CharacterId,
    user_id: User,
    ctx: Context,
) -> dict[str, Any]:
    """Live short-term entries, newest first, with salience, themes and seconds to expiry."""
    entries = await KzgStore(ctx.redis).entries(_pair(user_id, character_id))
    result = []
    for entry in entries:
        f = entry.fields
        result.append(
            {
                "key": entry.key,
                "inhalt": f.get("inhalt", ""),
                "beobachter": f.get("beobachter", ""),
                "themen": [t.strip() for t in f.get("themen", "").split(",") if t.strip()],
                "salienz": parse_number(f.get("salienz")),
                "salienz_eingang": parse_number(f.get("salienz_eingang")),
                "haeufigkeit": int(parse_number(f.get("haeufigkeit")) or 0),
                "dimension": f.get("dimension", ""),
                "gedaechtnistyp": f.get("gedaechtnistyp", ""),
                "emotion": f.get("emotion", ""),
                "erstellt_am": parse_number(f.get("erstellt_am")),
                "befoerderung_am": parse_number(f.get("befoerderung_am")),
                "ttl_s": None if entry.ttl_ms is None or entry.ttl_ms < 0 else entry.ttl_ms / 1000,
            }
        )
    return {"entries": result}


@router.delete(
    "/memory/{character_id}/short_term/{key}",
    status_code=204,
    summary="Forget one short-term entry (404 unless it is a live entry of the caller's pair)",
)
async def forget_short_term(
    character_id: CharacterId,
    key: Annotated[str, Path(min_length=1, max_length=300, pattern=NO_NUL), NoNul],
    user_id: User,
    ctx: Context,
) -> Response:
    if not await KzgStore(ctx.redis).delete(_pair(user_id, character_id), key):
        raise HTTPException(404, detail={"fehler": "nicht_gefunden", "detail": key})
    return Response(status_code=204)


@router.get("/memory/{character_id}/long_term")
async def long_term_view(
    character_id: CharacterId,
    user_id: User,
    ctx: Context,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    inaktive: Annotated[bool, Query(description="Include deactivated (decayed) nodes.")] = False,
) -> dict[str, Any]:
    """Long-term nodes, strongest first: weights, frequency, last reinforced and used."""
    pair = _pair(user_id, character_id)
    async with ctx.pool.connection() as conn:
        rows = await lzg.list_nodes(
            conn, pair, include_inactive=inaktive, limit=limit, offset=offset
        )
        counts = await lzg.count_nodes(conn, pair)
    nodes = [
        {
            "id": r["id"],
            "inhalt": r["inhalt"],
            "beobachter": r["beobachter"],
            "dimension": r["dimension"],
            "themen": r["themen"],
            "emotion": r["emotion"],
            "gewicht_roh": r["gewicht_roh"],
            "gewicht_absolut": r["gewicht_absolut"],
            "gewicht_decay": r["gewicht_decay"],
            "haeufigkeit": r["haeufigkeit"],
            "abrufe": r["abrufe"],
            "aktiv": r["aktiv"],
            "erstellt_am": r["erstellt_am"],
            "verstaerkt_am": r["verstaerkt_am"],
            "abgerufen_am": r["abgerufen_am"],
            "kanten": r["kanten"],
        }
        for r in rows
    ]
    return {"nodes": nodes, "anzahl": counts}


@router.get("/memory/{character_id}/goals")
async def goals_view(
    character_id: CharacterId,
    user_id: User,
    ctx: Context,
) -> dict[str, Any]:
    """The character's goals toward the caller with the motivation they have right now."""
    pair = _pair(user_id, character_id)
    now = datetime.now(UTC)
    async with ctx.pool.connection() as conn:
        rows = await goals.all_goals(conn, pair)
    result = []
    for row in rows:
        goal = dict(row)
        goal["motivation_jetzt"] = goals.live_motivation(goal, now)
        result.append(goal)
    return {"goals": result}


@router.get("/memory/{character_id}/profiles")
async def profiles_view(
    character_id: CharacterId,
    user_id: User,
    ctx: Context,
) -> dict[str, Any]:
    """Both distilled profiles; a profile not distilled yet is null."""
    async with ctx.pool.connection() as conn:
        user_profile, own = await character_profiles.read_pair_profiles(
            conn, _pair(user_id, character_id)
        )
    return {"user": user_profile, "character": own}


@router.get("/pipeline/{turn_id}")
async def pipeline_view(
    turn_id: Annotated[str, Path(min_length=1, max_length=128), NoNul],
    user_id: User,
    ctx: Context,
) -> dict[str, Any]:
    """Every pipeline-log row of one of the caller's turns, oldest first; 404 otherwise."""
    rows = [row for row in await read_turn(ctx.pool, turn_id) if row.get("user_id") == user_id]
    if not rows:
        raise HTTPException(404, detail={"fehler": "unbekannter_turn", "turn_id": turn_id})
    return {"turn_id": turn_id, "rows": rows}
