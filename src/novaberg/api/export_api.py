"""`GET /export[?character=C]`: the signed-in person's data as a download — the same
archive `novaberg export --user U` writes (docs/export.md), for a person who has no shell
on the server. Only the caller's own data: the user comes from the token, never a query."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Response

from novaberg.api.errors import AUTH
from novaberg.api.memory import Context, User
from novaberg.store.transfer.export import export_person

router = APIRouter(tags=["export"], responses={**AUTH})

ZIP = "application/zip"

_running: set[str] = set()
"""Users whose export this process is building: an export reads all of a person's rows,
so a second one at the same time is refused (429 `export_laeuft`) rather than doubled."""


@router.get(
    "/export",
    response_class=Response,
    responses={
        200: {"content": {ZIP: {}}, "description": "The archive (a zip)."},
        429: {"description": "export_laeuft: an export of the caller's is still running."},
    },
)
async def export_download(
    user_id: User,
    ctx: Context,
    character: Annotated[
        str | None, Query(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    ] = None,
) -> Response:
    """History, archive, short- and long-term memory, goals, profiles, notes,
    appointments, directives, identity, impulse settings, characters and persona of the
    caller (of one character, if named), as `novaberg-<user>-<date>.zip`."""
    if user_id in _running:
        raise HTTPException(
            429,
            {"fehler": "export_laeuft", "detail": "an export of this user is still running"},
            headers={"Retry-After": "5"},
        )
    _running.add(user_id)
    try:
        archive = await export_person(
            ctx.pool, ctx.redis, user_id, character_id=character, embed_dim=ctx.settings.embed_dim
        )
        body = await asyncio.to_thread(archive.to_bytes)  # zipping is CPU work: off the loop
    finally:
        _running.discard(user_id)
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    name = f"novaberg-{user_id}{'-' + character if character else ''}-{day}.zip"
    return Response(
        body,
        media_type=ZIP,
        headers={
            "Content-Disposition": f'attachment; filename="{name}"',
            "Cache-Control": "no-store",
        },
    )
