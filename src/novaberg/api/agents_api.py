"""HTTP read/write endpoints for the task agents' data: notes, timeline, directives, identity.

Why direct endpoints next to the chat: a user (or a client app) must be able to
see and correct what the agents stored without talking to Nova. They use the
same repositories as the agents, so the same rules hold (archive instead of
delete, bi-temporal timeline changes, deactivate instead of delete for rules,
at most three active identities). Every call is scoped to the token's user.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from novaberg.agents import rule_store
from novaberg.agents.character_identity import MAX_ACTIVE
from novaberg.agents.notes import repository as notes_repo
from novaberg.agents.quota import QuotaExceeded
from novaberg.agents.timeline import display
from novaberg.agents.timeline import repository as timeline_repo
from novaberg.api.auth import current_user
from novaberg.api.context import AppContext, get_context
from novaberg.api.errors import AUTH, BODY, CONFLICT, ITEM
from novaberg.api.fields import (
    Context,
    Details,
    EventTime,
    Instruction,
    Name,
    NoteText,
    Theme,
    Title,
)
from novaberg.store.tables import DIRECTIVES, IDENTITIES, RuleTable

router = APIRouter(
    prefix="/agents", tags=["agents"], responses={**AUTH, **BODY, **ITEM, **CONFLICT}
)

UserId = Annotated[str, Depends(current_user)]
Ctx = Annotated[AppContext, Depends(get_context)]

NoteType = Literal["einkauf", "todo", "merkliste", "notiz", "entwurf", "idee"]
EventType = Literal["termin", "geburtstag", "deadline", "jahrestag", "erinnerung"]


def _now() -> datetime:
    return datetime.now(UTC)


def _over_quota(exc: QuotaExceeded) -> HTTPException:
    return HTTPException(
        409,
        detail={"fehler": "limit_erreicht", "detail": f"{exc}; archive or delete some first"},
    )


def _not_found(what: str, item_id: int) -> HTTPException:
    return HTTPException(404, detail={"fehler": "nicht_gefunden", "detail": f"{what} {item_id}"})


# --- models ---------------------------------------------------------------------------


class NoteOut(BaseModel):
    id: int
    name: str
    typ: str
    text: str
    zusammenfassung: str
    themen: list[str]
    aktiv: bool
    status: str
    created_at: datetime
    updated_at: datetime


class NoteCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Name = Field(examples=["Einkaufsliste"])
    typ: NoteType = "notiz"
    text: NoteText = Field(default="", examples=["Milch, Eier, Brot"])
    themen: list[Theme] = Field(default_factory=list, max_length=10)


class NoteUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Name | None = None
    typ: NoteType | None = None
    text: NoteText | None = None


class TimelineOut(BaseModel):
    id: int
    title: str
    event_time: datetime
    event_type: str
    details: str
    precision: str
    remind: bool
    aktiv: bool
    vorgaenger_id: int | None
    datum_lokal: str = Field(description="dd.mm.yyyy[ HH:MM] in the server's time zone")


class TimelineCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: Title = Field(examples=["Zahnarzt"])
    event_time: EventTime = Field(description="ISO 8601 with offset, 1900–2199; stored in UTC")
    event_type: EventType = "termin"
    details: Details = ""
    precision: Literal["minute", "day"] = "minute"


class TimelineUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: Title | None = None
    event_time: EventTime | None = None
    details: Details | None = None
    precision: Literal["minute", "day"] | None = None


class RuleOut(BaseModel):
    id: int
    anweisung: str
    kontext: str | None = None
    aktiv: bool
    erstellt_am: datetime
    geaendert_am: datetime | None


class DirectiveIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    anweisung: Instruction = Field(examples=["Den Nutzer immer siezen"])
    kontext: Context | None = None


class IdentityIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    anweisung: Instruction = Field(examples=["Ein lustiges Mädel vom Land"])


def _timeline_out(row: dict[str, Any], ctx: AppContext) -> TimelineOut:
    return TimelineOut(**row, datum_lokal=display.datum(row, ctx.settings.tz))


# --- notes ----------------------------------------------------------------------------


@router.get("/notes", response_model=list[NoteOut], summary="Active notes")
async def list_notes(user_id: UserId, ctx: Ctx) -> list[dict[str, Any]]:
    return await notes_repo.list_active(ctx.pool, user_id)


@router.get("/notes/{note_id}", response_model=NoteOut, summary="One note (also archived)")
async def get_note(note_id: int, user_id: UserId, ctx: Ctx) -> dict[str, Any]:
    row = await notes_repo.get(ctx.pool, user_id, note_id)
    if row is None:
        raise _not_found("note", note_id)
    return row


@router.post("/notes", response_model=NoteOut, status_code=201, summary="Create a note")
async def create_note(body: NoteCreate, user_id: UserId, ctx: Ctx) -> dict[str, Any]:
    try:
        note_id = await notes_repo.insert(
            ctx.pool,
            user_id,
            name=body.name,
            typ=body.typ,
            text=body.text,
            themen=body.themen,
            now=_now(),
            limit=ctx.settings.max_notes,
        )
    except QuotaExceeded as exc:
        raise _over_quota(exc) from None
    return await get_note(note_id, user_id, ctx)


@router.patch("/notes/{note_id}", response_model=NoteOut, summary="Rename or rewrite a note")
async def update_note(
    note_id: int,
    body: NoteUpdate,
    user_id: UserId,
    ctx: Ctx,
) -> dict[str, Any]:
    row = await get_note(note_id, user_id, ctx)
    if not row["aktiv"]:
        raise HTTPException(409, detail={"fehler": "archiviert", "detail": f"note {note_id}"})
    changes = body.model_dump(exclude_none=True)
    if changes:  # one statement: never a renamed note with its old text
        await notes_repo.set_fields(ctx.pool, user_id, note_id, _now(), **changes)
    return await get_note(note_id, user_id, ctx)


@router.delete("/notes/{note_id}", status_code=204, summary="Archive a note (row is kept)")
async def delete_note(note_id: int, user_id: UserId, ctx: Ctx) -> Response:
    await get_note(note_id, user_id, ctx)
    await notes_repo.archive(ctx.pool, user_id, note_id, _now())
    return Response(status_code=204)


# --- timeline ---------------------------------------------------------------------------


@router.get("/timeline", response_model=list[TimelineOut], summary="Active entries in a range")
async def list_timeline(
    user_id: UserId,
    ctx: Ctx,
    von: Annotated[EventTime | None, Query(description="start, default now − 3 d")] = None,
    bis: Annotated[EventTime | None, Query(description="end, default now + 14 d")] = None,
) -> list[TimelineOut]:
    now = _now()
    start = von or now - display.DEFAULT_WINDOW[0]
    end = bis or now + display.DEFAULT_WINDOW[1]
    rows = await timeline_repo.in_range(ctx.pool, user_id, start, end)
    return [_timeline_out(r, ctx) for r in rows]


@router.get("/timeline/{entry_id}", response_model=TimelineOut, summary="One entry")
async def get_timeline_entry(entry_id: int, user_id: UserId, ctx: Ctx) -> TimelineOut:
    row = await timeline_repo.get(ctx.pool, user_id, entry_id)
    if row is None:
        raise _not_found("timeline entry", entry_id)
    return _timeline_out(row, ctx)


@router.post("/timeline", response_model=TimelineOut, status_code=201, summary="Create an entry")
async def create_timeline_entry(
    body: TimelineCreate,
    user_id: UserId,
    ctx: Ctx,
) -> TimelineOut:
    try:
        entry_id = await timeline_repo.insert(
            ctx.pool,
            user_id,
            title=body.title,
            event_time=body.event_time,
            event_type=body.event_type,
            details=body.details,
            precision=body.precision,
            now=_now(),
            limit=ctx.settings.max_appointments,
        )
    except QuotaExceeded as exc:
        raise _over_quota(exc) from None
    return await get_timeline_entry(entry_id, user_id, ctx)


@router.patch(
    "/timeline/{entry_id}",
    response_model=TimelineOut,
    summary="Change an entry (bi-temporal: returns the new row, the old one turns inactive)",
)
async def update_timeline_entry(
    entry_id: int,
    body: TimelineUpdate,
    user_id: UserId,
    ctx: Ctx,
) -> TimelineOut:
    row = await timeline_repo.get(ctx.pool, user_id, entry_id)
    if row is None or not row["aktiv"]:
        raise _not_found("active timeline entry", entry_id)
    new_id = await timeline_repo.replace(
        ctx.pool,
        user_id,
        entry_id,
        title=body.title or row["title"],
        event_time=body.event_time or row["event_time"],
        event_type=row["event_type"],
        details=row["details"] if body.details is None else body.details,
        precision=body.precision or row["precision"],
        now=_now(),
    )
    if new_id is None:  # changed or deleted since it was read
        raise _not_found("active timeline entry", entry_id)
    return await get_timeline_entry(new_id, user_id, ctx)


@router.delete("/timeline/{entry_id}", status_code=204, summary="Deactivate an entry")
async def delete_timeline_entry(entry_id: int, user_id: UserId, ctx: Ctx) -> Response:
    await get_timeline_entry(entry_id, user_id, ctx)
    await timeline_repo.deactivate(ctx.pool, user_id, entry_id, _now())
    return Response(status_code=204)


# --- directives and identity (same rule table shape) -------------------------------------


async def _rules(
    ctx: AppContext, table: RuleTable, user_id: str, inactive: bool
) -> list[dict[str, Any]]:
    rows = await rule_store.active(ctx.pool, table, user_id)
    if inactive:
        rows += await rule_store.recent_inactive(ctx.pool, table, user_id, limit=100)
    return rows


async def _rule(ctx: AppContext, table: RuleTable, user_id: str, rule_id: int) -> dict:
    row = await rule_store.get(ctx.pool, table, user_id, rule_id)
    if row is None:
        raise _not_found(table, rule_id)
    return row


async def _active_rule(ctx: AppContext, table: RuleTable, user_id: str, rule_id: int) -> dict:
    """The rule to change; an inactive one is restored first, never edited back to life
    (for identities that would pass the limit of active ones)."""
    row = await _rule(ctx, table, user_id, rule_id)
    if not row["aktiv"]:
        raise HTTPException(
            409,
            detail={"fehler": "inaktiv", "detail": f"{table} {rule_id} is inactive; reactivate it"},
        )
    return row


async def _replace_rule(
    ctx: AppContext,
    table: RuleTable,
    user_id: str,
    rule_id: int,
    text: str,
    context: str | None = None,
) -> dict[str, Any]:
    """Replace an active rule's text (a directive keeps its context unless a new one is given)."""
    old = await _active_rule(ctx, table, user_id, rule_id)
    if context is None:
        context = old.get("kontext")
    try:
        new_id = await rule_store.replace(
            ctx.pool, table, user_id, [rule_id], text, _now(), context, _rule_limit(ctx, table)
        )
    except QuotaExceeded as exc:
        raise _over_rule_quota(exc, table) from None
    return await _rule(ctx, table, user_id, new_id)


async def _set_active(
    ctx: AppContext, table: RuleTable, user_id: str, rule_id: int, aktiv: bool
) -> dict[str, Any]:
    await _rule(ctx, table, user_id, rule_id)
    if aktiv:  # a restore counts like a create: never past the limit
        try:
            await rule_store.reactivate(
                ctx.pool, table, user_id, rule_id, _now(), _rule_limit(ctx, table)
            )
        except QuotaExceeded as exc:
            raise _over_rule_quota(exc, table) from None
    else:
        await rule_store.set_active(ctx.pool, table, user_id, [rule_id], False, _now())
    return await _rule(ctx, table, user_id, rule_id)


def _rule_limit(ctx: AppContext, table: RuleTable) -> int:
    """Active rules a user may keep: NOVABERG_MAX_DIRECTIVES, or three identities."""
    return MAX_ACTIVE if table == IDENTITIES else ctx.settings.max_directives


def _over_rule_quota(exc: QuotaExceeded, table: RuleTable) -> HTTPException:
    if table != IDENTITIES:
        return _over_quota(exc)
    return HTTPException(
        409,
        detail={
            "fehler": "zu_viele_anweisungen",
            "detail": f"at most {MAX_ACTIVE} active identities; delete or update one first",
        },
    )


@router.get("/directives", response_model=list[RuleOut], summary="Directives")
async def list_directives(
    user_id: UserId,
    ctx: Ctx,
    include_inactive: bool = False,
) -> list[dict[str, Any]]:
    return await _rules(ctx, DIRECTIVES, user_id, include_inactive)


@router.post("/directives", response_model=RuleOut, status_code=201, summary="Add a directive")
async def create_directive(body: DirectiveIn, user_id: UserId, ctx: Ctx) -> dict[str, Any]:
    try:
        new_id = await rule_store.insert(
            ctx.pool,
            DIRECTIVES,
            user_id,
            body.anweisung,
            _now(),
            body.kontext,
            limit=ctx.settings.max_directives,
        )
    except QuotaExceeded as exc:
        raise _over_quota(exc) from None
    return await _rule(ctx, DIRECTIVES, user_id, new_id)


@router.patch(
    "/directives/{rule_id}",
    response_model=RuleOut,
    summary="Replace a directive's text (old row deactivated, new row returned)",
)
async def update_directive(
    rule_id: int,
    body: DirectiveIn,
    user_id: UserId,
    ctx: Ctx,
) -> dict[str, Any]:
    return await _replace_rule(ctx, DIRECTIVES, user_id, rule_id, body.anweisung, body.kontext)


@router.delete("/directives/{rule_id}", status_code=204, summary="Deactivate a directive")
async def delete_directive(rule_id: int, user_id: UserId, ctx: Ctx) -> Response:
    await _set_active(ctx, DIRECTIVES, user_id, rule_id, False)
    return Response(status_code=204)


@router.post(
    "/directives/{rule_id}/reactivate", response_model=RuleOut, summary="Restore a directive"
)
async def reactivate_directive(rule_id: int, user_id: UserId, ctx: Ctx) -> dict[str, Any]:
    return await _set_active(ctx, DIRECTIVES, user_id, rule_id, True)


@router.get("/identity", response_model=list[RuleOut], summary="Character identity instructions")
async def list_identity(
    user_id: UserId,
    ctx: Ctx,
    include_inactive: bool = False,
) -> list[dict[str, Any]]:
    return await _rules(ctx, IDENTITIES, user_id, include_inactive)


@router.post(
    "/identity",
    response_model=RuleOut,
    status_code=201,
    summary="Add an identity instruction (409 beyond three active)",
)
async def create_identity(body: IdentityIn, user_id: UserId, ctx: Ctx) -> dict[str, Any]:
    try:
        new_id = await rule_store.insert(
            ctx.pool, IDENTITIES, user_id, body.anweisung, _now(), limit=MAX_ACTIVE
        )
    except QuotaExceeded as exc:
        raise _over_rule_quota(exc, IDENTITIES) from None
    return await _rule(ctx, IDENTITIES, user_id, new_id)


@router.patch(
    "/identity/{rule_id}",
    response_model=RuleOut,
    summary="Replace an instruction's text (old row deactivated, new row returned)",
)
async def update_identity(
    rule_id: int,
    body: IdentityIn,
    user_id: UserId,
    ctx: Ctx,
) -> dict[str, Any]:
    return await _replace_rule(ctx, IDENTITIES, user_id, rule_id, body.anweisung)


@router.delete("/identity/{rule_id}", status_code=204, summary="Deactivate an instruction")
async def delete_identity(rule_id: int, user_id: UserId, ctx: Ctx) -> Response:
    await _set_active(ctx, IDENTITIES, user_id, rule_id, False)
    return Response(status_code=204)


@router.post(
    "/identity/{rule_id}/reactivate",
    response_model=RuleOut,
    summary="Restore an instruction (409 beyond three active)",
)
async def reactivate_identity(rule_id: int, user_id: UserId, ctx: Ctx) -> dict[str, Any]:
    return await _set_active(ctx, IDENTITIES, user_id, rule_id, True)
