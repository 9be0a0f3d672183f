"""The person stays in control of what Nova does on her own
(docs/behaviour/pixie.md#settings).

- `GET /settings?character_id=` — impulses on/off, quiet hours, zone, impulses per day
- `PATCH /settings` — change any of them (per user and character); `kanaele`: what each
  kind of linked channel gets (per user, docs/behaviour/reach.md#settings)
- `GET /impulses?character_id=` — the stack and the shadow queue, each entry with why it
  exists, and the last gate decisions
- `DELETE /impulses/{entry_id}?character_id=` — dismiss a stack entry (its id) or a
  shadow task (`auftrag-<id>`)
Every call is scoped to the token's user.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any, Final, Literal, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from fastapi import APIRouter, Depends, HTTPException, Query, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from novaberg.api.auth import current_user
from novaberg.api.characters_api import NOT_FOUND, unknown_character
from novaberg.api.context import AppContext, get_context
from novaberg.api.errors import AUTH, BODY, ITEM
from novaberg.impulses import settings as impulse_settings
from novaberg.impulses import shadow_queue
from novaberg.impulses import stack as impulse_stack
from novaberg.pair import Pair
from novaberg.store import channel_settings, characters

router = APIRouter(tags=["impulses"], responses={**AUTH, **BODY, **ITEM})

UserId = Annotated[str, Depends(current_user)]
Ctx = Annotated[AppContext, Depends(get_context)]
CharacterQuery = Annotated[
    str | None, Query(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
]

LOG_ROWS: Final = 20

ZONES: Final = sorted(available_timezones())
"""The IANA zones this machine knows, advertised in the schema (a name outside them is
refused with 422)."""


class ChannelPrefs(BaseModel):
    """What one kind of linked channel gets besides the answers to its own messages
    (docs/behaviour/reach.md#settings)."""

    antworten: bool = Field(description="Answers and failed turns of what was written elsewhere.")
    impulse: bool = Field(description="Nova's own thoughts and follow-ups.")
    erinnerungen: bool = Field(description="Reminders.")


class ChannelPrefsPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    antworten: bool | None = Field(default=None, strict=True)
    impulse: bool | None = Field(default=None, strict=True)
    erinnerungen: bool | None = Field(default=None, strict=True)


class SettingsOut(BaseModel):
    character_id: str
    impulse: bool
    ruhezeit: str
    zeitzone: str
    pro_tag: int
    kanaele: dict[Literal["telegram", "push"], ChannelPrefs] = Field(
        description="Per channel kind, for the person (the same for every character)."
    )


class SettingsPatch(BaseModel):
    """Only the given fields change. `ruhezeit` "" = no quiet hours."""

    model_config = ConfigDict(extra="forbid")

    character_id: str | None = Field(
        default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$"
    )
    impulse: bool | None = Field(default=None, strict=True)
    ruhezeit: str | None = Field(
        default=None, pattern=r"^(|([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d)$"
    )
    zeitzone: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        json_schema_extra=cast(dict[str, Any], {"enum": ZONES}),
    )
    pro_tag: int | None = Field(default=None, ge=0, le=50)
    kanaele: dict[Literal["telegram", "push"], ChannelPrefsPatch] | None = None

    @field_validator("pro_tag", mode="before")
    @classmethod
    def _whole(cls, value: Any) -> Any:
        """A JSON number with no fraction (33.0 is 33); a string or a bool is not one."""
        if value is None:
            return None
        whole_float = isinstance(value, float) and value.is_integer()
        if isinstance(value, bool) or not (isinstance(value, int) or whole_float):
            raise ValueError("pro_tag must be a whole number")
        return int(value)

    @field_validator("zeitzone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r}") from None
        return value


async def _settings(ctx: AppContext, user_id: str, character_id: str) -> dict[str, Any]:
    current = await impulse_settings.read(
        ctx.pool,
        user_id,
        character_id,
        default_quiet=ctx.settings.quiet_hours,
        default_zone=ctx.settings.timezone,
    )
    channels = await channel_settings.read(ctx.pool, user_id)
    return {"character_id": character_id, **current.wire(), "kanaele": channels}


@router.get("/settings", response_model=SettingsOut, summary="Nova's impulse settings")
async def get_settings(
    user_id: UserId, ctx: Ctx, character_id: CharacterQuery = None
) -> dict[str, Any]:
    return await _settings(ctx, user_id, character_id or ctx.settings.character)


@router.patch(
    "/settings",
    response_model=SettingsOut,
    responses=NOT_FOUND,
    summary="Change the impulse settings",
)
async def patch_settings(body: SettingsPatch, user_id: UserId, ctx: Ctx) -> dict[str, Any]:
    """Stored per user and character; only for a character the caller can talk to."""
    character_id = body.character_id or ctx.settings.character
    async with ctx.pool.connection() as conn:
        if not await characters.is_visible(conn, user_id, character_id):
            raise unknown_character(character_id)
    changes = body.model_dump(exclude_none=True, exclude={"character_id", "kanaele"})
    await impulse_settings.update(ctx.pool, user_id, character_id, changes)
    if body.kanaele:
        await channel_settings.update(
            ctx.pool,
            user_id,
            {kind: p.model_dump(exclude_none=True) for kind, p in body.kanaele.items()},
        )
    return await _settings(ctx, user_id, character_id)


def _task_view(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"{shadow_queue.TASK_ID_PREFIX}{row['id']}",
        "aufgabe": row["aufgabe"],
        "thema": row["thema"],
        "warum": row["grund"] or row["aufgabe"],
        "kontext": row["kontext"],
        "salienz": round(float(row["salienz_decay"]), 4),
        "haeufigkeit": row["haeufigkeit"],
        "aktiv": row["aktiv"],
        "bezug_id": row["bezug_id"],
        "versuche": row["versuche"],
        "erstellt_am": row["erstellt_am"].isoformat(),
    }


@router.get("/impulses", summary="What Nova might say on her own, and why")
async def list_impulses(
    user_id: UserId, ctx: Ctx, character_id: CharacterQuery = None
) -> dict[str, Any]:
    character = character_id or ctx.settings.character
    pair = Pair(user_id, character)
    stack = [
        {**e.public(), "warum": e.grund or e.aufgabe}
        for e in await impulse_stack.entries(ctx.redis, pair)
    ]
    failed = await impulse_stack.failures(ctx.redis, pair)
    for item in stack:
        failure = failed.get(item["id"])
        if failure is not None:
            item["fehlversuche"] = asdict(failure)
    parked = [
        {**item, "warum": item.get("grund") or item.get("aufgabe")}
        for item in await impulse_stack.parked(ctx.redis, pair)
    ]
    tasks = [_task_view(r) for r in await shadow_queue.for_pair(ctx.pool, user_id, character)]
    async with ctx.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT erstellt_am, ergebnis, grund, eintrag_id, turn_id, tore FROM impuls_protokoll"
            " WHERE user_id = %s AND character_id = %s ORDER BY id DESC LIMIT %s",
            (user_id, character, LOG_ROWS),
        )
        rows: list[Any] = await cur.fetchall()
        log_rows = [{**r, "erstellt_am": r["erstellt_am"].isoformat()} for r in rows]
    return {
        "einstellungen": await _settings(ctx, user_id, character),
        "stapel": stack,
        "geparkt": parked,
        "warteschlange": tasks,
        "protokoll": log_rows,
    }


@router.delete("/impulses/{entry_id}", status_code=204, summary="Dismiss an entry")
async def dismiss_impulse(
    entry_id: str, user_id: UserId, ctx: Ctx, character_id: CharacterQuery = None
) -> Response:
    character = character_id or ctx.settings.character
    task_id = shadow_queue.task_id_of(entry_id)
    if task_id is not None:
        found = await shadow_queue.dismiss(ctx.pool, user_id, character, task_id)
    elif entry_id.startswith(shadow_queue.TASK_ID_PREFIX):
        found = False
    else:
        pair = Pair(user_id, character)
        found = await impulse_stack.remove(ctx.redis, pair, [entry_id]) == 1
        found = found or await impulse_stack.dismiss_parked(ctx.redis, pair, entry_id)
    if not found:
        raise HTTPException(404, detail={"fehler": "nicht_gefunden", "detail": entry_id})
    return Response(status_code=204)
