"""Read APIs of the memory for the chat page's panels and for people
(docs/behaviour/memory.md#looking-inside).

Every route is scoped to the caller (`current_user`) and one character, i.e. one pair:

- `GET /memory/{character_id}/session` — session turns (embeddings left out) and summary
- `GET /memory/{character_id}/short_term` — short-term entries: salience, themes, TTL left
- `DELETE /memory/{character_id}/short_term/{key}` — forget one short-term entry
- `PATCH /memory/{character_id}/short_term/{key}` — correct its text (re-embedded)
- `GET /memory/{character_id}/long_term` — long-term nodes: weights, last reinforced/used
- `DELETE /memory/{character_id}/long_term/{id}` — delete one node for good (tombstoned)
- `PATCH /memory/{character_id}/long_term/{id}` — correct its text (re-embedded)
- `GET /memory/{character_id}/goals` — the character's goals toward the caller
- `GET /memory/{character_id}/profiles` — both distilled profiles (user, character)
- `GET /pipeline/{turn_id}` — the pipeline log of one of the caller's turns

Reading changes nothing (reading a panel is not a retrieval, so it does not reinforce
long-term nodes); the writes are the person's own: forgetting or correcting an entry they
point at (docs/behaviour/memory.md#correcting-and-deleting). Goals and profiles are read
only: the character job distils both from the memory again, so an edit there would not last;
correcting or deleting the memory they rest on marks the profiles for re-distillation.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Response
from pydantic import BaseModel, ConfigDict

from novaberg.api.auth import current_user
from novaberg.api.context import AppContext, get_context
from novaberg.api.errors import AUTH, BODY, EMBEDDING, ITEM
from novaberg.api.fields import MAX_OFFSET, NO_NUL, MemoryText, NoNul
from novaberg.ei.canon import parse_number
from novaberg.llm.errors import ModelError
from novaberg.memory.long_term.edits import correct_node, delete_node
from novaberg.memory.short_term.edits import correct_entry
from novaberg.pair import Pair
from novaberg.store import character_profiles, goals
from novaberg.store.long_term_nodes import LongTermNode, count_nodes, list_nodes
from novaberg.store.pipeline_log import read_turn
from novaberg.store.session import read_summary, read_turns
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_codec import CORRECTED_FIELD

router = APIRouter(tags=["memory"], responses={**AUTH, **ITEM})

CharacterId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]
User = Annotated[str, Depends(current_user)]
Context = Annotated[AppContext, Depends(get_context)]

SESSION_HIDDEN: Final = frozenset({"embedding"})
"""Turn fields not sent to clients (large and meaningless to read)."""


EntryKey = Annotated[str, Path(min_length=1, max_length=300, pattern=NO_NUL), NoNul]
NodeId = Annotated[int, Path(ge=1, le=2**63 - 1)]


class Correction(BaseModel):
    """The text a memory should say instead (trimmed; blank is a 422)."""

    model_config = ConfigDict(extra="forbid")
    inhalt: MemoryText


def _pair(user_id: str, character_id: str) -> Pair:
    return Pair(user_id, character_id)


def _not_found(what: str | int) -> HTTPException:
    return HTTPException(404, detail={"fehler": "nicht_gefunden", "detail": str(what)})


def _unembedded(exc: ModelError) -> HTTPException:
    """A correction whose text could not be embedded changes nothing (a text under its old
    vector would be found by what it no longer says)."""
    return HTTPException(
        503, detail={"fehler": "modell_nicht_erreichbar", "detail": f"{type(exc).__name__}"}
    )


def _short_term_row(key: str, f: dict[str, str], ttl_ms: int | None) -> dict[str, Any]:
    return {
        "key": key,
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
        "korrigiert_am": parse_number(f.get(CORRECTED_FIELD)),
        "turn_id": f.get("turn_id") or None,
        "ttl_s": None if ttl_ms is None or ttl_ms < 0 else ttl_ms / 1000,
    }


def _long_term_row(node: LongTermNode) -> dict[str, Any]:
    return {
        "id": node.id,
        "inhalt": node.text,
        "beobachter": node.observer,
        "dimension": node.dimension,
        "themen": node.themes,
        "emotion": node.emotion,
        "gewicht_roh": node.raw_weight,
        "gewicht_absolut": node.absolute_weight,
        "gewicht_decay": node.decayed_weight,
        "haeufigkeit": node.frequency,
        "abrufe": node.retrievals,
        "aktiv": node.active,
        "erstellt_am": node.created_at,
        "verstaerkt_am": node.reinforced_at,
        "abgerufen_am": node.retrieved_at,
        "korrigiert_am": node.corrected_at,
        "kanten": node.edge_count,
    }


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
    entries = await ShortTermStore(ctx.redis).entries(_pair(user_id, character_id))
    result = [_short_term_row(e.key, e.fields, e.ttl_ms) for e in entries]
    return {"entries": result}


@router.delete(
    "/memory/{character_id}/short_term/{key}",
    status_code=204,
    responses=BODY,
    summary="Forget one short-term entry (404 unless it is a live entry of the caller's pair)",
)
async def forget_short_term(
    character_id: CharacterId,
    key: EntryKey,
    user_id: User,
    ctx: Context,
) -> Response:
    if not await ShortTermStore(ctx.redis).delete(_pair(user_id, character_id), key):
        raise _not_found(key)
    return Response(status_code=204)


@router.patch(
    "/memory/{character_id}/short_term/{key}",
    responses={**BODY, **EMBEDDING},
    summary="Correct one short-term entry's text (re-embedded; key, TTL, provenance stay)",
)
async def correct_short_term(
    character_id: CharacterId,
    key: EntryKey,
    body: Correction,
    user_id: User,
    ctx: Context,
) -> dict[str, Any]:
    """The corrected entry, stamped `korrigiert_am`; 404 unless a live entry of the pair."""
    pair = _pair(user_id, character_id)
    store = ShortTermStore(ctx.redis)
    try:
        corrected = await correct_entry(store, ctx.model, pair, key, body.inhalt)
    except ModelError as exc:
        raise _unembedded(exc) from exc
    if not corrected:
        raise _not_found(key)
    entry = await store.get(key)
    if entry is None:  # expired right after the correction
        raise _not_found(key)
    return _short_term_row(key, entry.fields, int(await ctx.redis.pttl(key)))


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
        nodes = await list_nodes(conn, pair, include_inactive=inaktive, limit=limit, offset=offset)
        counts = await count_nodes(conn, pair)
    return {
        "nodes": [_long_term_row(node) for node in nodes],
        "anzahl": {"aktiv": counts.active, "gesamt": counts.total},
    }


@router.delete(
    "/memory/{character_id}/long_term/{node_id}",
    status_code=204,
    responses=BODY,
    summary="Delete one long-term node for good (404 unless it is a node of the caller's pair)",
)
async def delete_long_term(
    character_id: CharacterId,
    node_id: NodeId,
    user_id: User,
    ctx: Context,
) -> Response:
    """The node and its edges go; its source keys are tombstoned so no promotion or import
    brings it back, and their live short-term entries are forgotten with it."""
    pair = _pair(user_id, character_id)
    if await delete_node(ctx.pool, ShortTermStore(ctx.redis), pair, node_id) is None:
        raise _not_found(node_id)
    return Response(status_code=204)


@router.patch(
    "/memory/{character_id}/long_term/{node_id}",
    responses={**BODY, **EMBEDDING},
    summary="Correct one long-term node's text (re-embedded; weights, edges, provenance stay)",
)
async def correct_long_term(
    character_id: CharacterId,
    node_id: NodeId,
    body: Correction,
    user_id: User,
    ctx: Context,
) -> dict[str, Any]:
    """The corrected node, stamped `korrigiert_am`; 404 unless a node of the caller's pair."""
    pair = _pair(user_id, character_id)
    try:
        node = await correct_node(ctx.pool, ctx.redis, ctx.model, pair, node_id, body.inhalt)
    except ModelError as exc:
        raise _unembedded(exc) from exc
    if node is None:
        raise _not_found(node_id)
    return _long_term_row(node)


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
