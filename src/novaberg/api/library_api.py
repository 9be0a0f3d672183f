"""The signed-in person's library (docs/behaviour/library.md#on-the-page): the folders she
lets Nova read, and the passages the search found in them.

- `GET /library/roots` — her approved folders with their counts (files indexed, not
  readable, skipped; passages) and `fortschritt` while a pass runs (and a while after)
- `POST /library/roots` `{"pfad": …}` — approve a folder (her own act, within
  NOVABERG_LIBRARY_FOLDERS) and start indexing it in the background; 201 at once
- `DELETE /library/roots/{root_id}` — revoke it: its index is deleted
- `POST /library/roots/{root_id}/reindex` — index it again in the background (202)
- `GET /library/passages/{passage_id}` — one passage with its file, page, heading and lines
  and its neighbours in the file (what "open the passage" shows)

The progress is polled: the page asks `GET /library/roots` while a pass runs (the pass may
run in another API process; Redis holds its progress). A refused folder is a 422
`ordner_abgelehnt` whose `detail` says why in one line; another person's root or passage
is a 404 like one that does not exist.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, Depends, HTTPException, Path
from pydantic import BaseModel, ConfigDict, Field

from novaberg.api.auth import current_user
from novaberg.api.context import AppContext, get_context
from novaberg.api.errors import AUTH, BODY, ITEM, ErrorOut
from novaberg.api.fields import FolderPath
from novaberg.memory.library import person
from novaberg.memory.library.indexer import LibraryLimits
from novaberg.memory.library.person import NotHers, RootView
from novaberg.memory.library.progress import PassBusy, start_pass
from novaberg.memory.library.roots import RootRefused
from novaberg.store.library_progress import Progress
from novaberg.store.library_reading import FilePassage

router = APIRouter(tags=["library"], responses={**AUTH})

User = Annotated[str, Depends(current_user)]
Context = Annotated[AppContext, Depends(get_context)]
RootId = Annotated[int, Path(ge=1, le=2**63 - 1)]
PassageId = Annotated[int, Path(ge=1, le=2**63 - 1)]


def _doc(text: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": text}


def _refused(text: str) -> dict[str, Any]:
    """A 422 is either the framework's (a malformed body) or ours (a folder that cannot be
    approved): both shapes are documented."""
    shapes = [
        {"$ref": "#/components/schemas/HTTPValidationError"},
        {"$ref": "#/components/schemas/ErrorOut"},
    ]
    return {"description": text, "content": {"application/json": {"schema": {"anyOf": shapes}}}}


REFUSED: Final[dict[int | str, dict[str, Any]]] = {
    422: _refused(
        "ordner_abgelehnt: the folder cannot be approved (`detail` says why in one line: no "
        "such folder, not a folder, outside NOVABERG_LIBRARY_FOLDERS, the data directory, a "
        "system folder, too many files, overlapping an approved folder)"
    )
}
BUSY: Final[dict[int | str, dict[str, Any]]] = {
    409: _doc("laeuft_bereits: a pass over this folder is running")
}


class FolderIn(BaseModel):
    """The folder to approve: its full path (`/…` or `~/…`, `~` being the server's home)."""

    model_config = ConfigDict(extra="forbid")
    pfad: FolderPath


class ProgressOut(BaseModel):
    zustand: Literal["laeuft", "fertig", "fehlgeschlagen"]
    erledigt: int = Field(description="Files looked at so far.")
    gesamt: int | None = Field(description="Files the pass looks at (null until listed).")
    meldung: str = Field(description="Why a failed pass ended (one line), else empty.")


class RootOut(BaseModel):
    id: int
    pfad: str
    freigegeben_am: datetime
    dateien: int = Field(description="Files indexed.")
    fehler: int = Field(description="Files that could not be read or parsed.")
    uebersprungen: int = Field(description="Files over a limit.")
    abschnitte: int = Field(description="Passages.")
    fortschritt: ProgressOut | None = Field(
        description="The running pass (or the last one, for a few minutes after); null else."
    )


class RootsOut(BaseModel):
    wurzeln: list[RootOut]


class RevokedOut(BaseModel):
    id: int
    pfad: str
    abschnitte_geloescht: int


class PassageOut(BaseModel):
    id: int
    datei: str = Field(description="The file's absolute path.")
    seite: int | None = Field(description="Its page (null: the format has no pages).")
    ueberschrift: str = Field(description="The heading path above it (' › '-joined).")
    zeilen: list[int] = Field(description="[from, to] in the file's extracted text.")
    label: str = Field(description="How it is cited: 'vertrag.pdf, S. 2, Z. 1–2'.")
    text: str


class OpenedPassageOut(PassageOut):
    wurzel_id: int
    vorher: list[PassageOut] = Field(description="Passages before it in the file, in order.")
    nachher: list[PassageOut] = Field(description="Passages after it in the file, in order.")


def _progress_out(progress: Progress | None) -> ProgressOut | None:
    if progress is None:
        return None
    return ProgressOut(
        zustand=progress.state,  # type: ignore[arg-type]
        erledigt=progress.done,
        gesamt=progress.total,
        meldung=progress.message,
    )


def _root_out(view: RootView) -> RootOut:
    counts = view.status.counts
    root = view.status.root
    return RootOut(
        id=root.id,
        pfad=root.path,
        freigegeben_am=root.approved_at,
        dateien=counts["ok"],
        fehler=counts["fehler"],
        uebersprungen=counts["uebersprungen"],
        abschnitte=counts["chunks"],
        fortschritt=_progress_out(view.progress),
    )


def _passage_out(passage: FilePassage) -> PassageOut:
    source = person.source_of(passage)
    return PassageOut(
        id=passage.id,
        datei=source.file,
        seite=passage.page,
        ueberschrift=passage.heading,
        zeilen=[passage.line_from, passage.line_to],
        label=source.label(),
        text=passage.text,
    )


def _not_found(exc: Exception) -> HTTPException:
    return HTTPException(404, detail={"fehler": "nicht_gefunden", "detail": str(exc)})


async def _one(ctx: AppContext, user_id: str, root_id: int) -> RootOut:
    views = await person.views(ctx.pool, ctx.redis, user_id, root_id)
    if not views:
        raise _not_found(NotHers(f"no approved folder {root_id} of yours"))
    return _root_out(views[0])


@router.get("/library/roots", response_model=RootsOut, summary="Your approved folders")
async def get_roots(user_id: User, ctx: Context) -> RootsOut:
    return RootsOut(
        wurzeln=[_root_out(view) for view in await person.views(ctx.pool, ctx.redis, user_id)]
    )


@router.post(
    "/library/roots",
    response_model=RootOut,
    status_code=201,
    responses={**BODY, **REFUSED},
    summary="Approve a folder for reading; it is indexed in the background",
)
async def post_root(body: FolderIn, user_id: User, ctx: Context) -> RootOut:
    try:
        root = await person.approve_for_person(ctx.pool, ctx.settings, user_id, body.pfad)
    except RootRefused as exc:
        raise HTTPException(
            # `grund`: which rule refused it, so the page can say it in the person's language
            422,
            detail={"fehler": "ordner_abgelehnt", "detail": str(exc), "grund": exc.reason.value},
        ) from None
    with contextlib.suppress(PassBusy):  # approved again while a pass runs: it indexes it
        await start_pass(ctx.pool, ctx.redis, ctx.model, root, LibraryLimits.of(ctx.settings))
    return await _one(ctx, user_id, root.id)


@router.delete(
    "/library/roots/{root_id}",
    response_model=RevokedOut,
    responses={**BODY, **ITEM},
    summary="Revoke a folder: its index is deleted",
)
async def delete_root(root_id: RootId, user_id: User, ctx: Context) -> RevokedOut:
    try:
        root, removed = await person.revoke_own(ctx.pool, ctx.redis, user_id, root_id)
    except NotHers as exc:
        raise _not_found(exc) from None
    return RevokedOut(id=root.id, pfad=root.path, abschnitte_geloescht=removed)


@router.post(
    "/library/roots/{root_id}/reindex",
    response_model=RootOut,
    status_code=202,
    responses={**BODY, **ITEM, **BUSY},
    summary="Index a folder again in the background (changed files read, deleted forgotten)",
)
async def reindex_root(root_id: RootId, user_id: User, ctx: Context) -> RootOut:
    try:
        root = await person.own_root(ctx.pool, user_id, root_id)
        await start_pass(ctx.pool, ctx.redis, ctx.model, root, LibraryLimits.of(ctx.settings))
    except NotHers as exc:
        raise _not_found(exc) from None
    except PassBusy as exc:
        raise HTTPException(409, detail={"fehler": "laeuft_bereits", "detail": str(exc)}) from None
    return await _one(ctx, user_id, root_id)


@router.get(
    "/library/passages/{passage_id}",
    response_model=OpenedPassageOut,
    responses={**ITEM},
    summary="One passage of your library with its neighbours in the file",
)
async def get_passage(passage_id: PassageId, user_id: User, ctx: Context) -> OpenedPassageOut:
    try:
        opened = await person.open_passage(ctx.pool, user_id, passage_id)
    except NotHers as exc:
        raise _not_found(exc) from None
    return OpenedPassageOut(
        **_passage_out(opened.passage).model_dump(),
        wurzel_id=opened.passage.root_id,
        vorher=[_passage_out(p) for p in opened.before],
        nachher=[_passage_out(p) for p in opened.after],
    )
