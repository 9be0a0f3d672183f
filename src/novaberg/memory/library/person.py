"""The library as a signed-in person handles it (the page, the API): approving a folder
within what the operator offers (`roots.PersonPolicy`), her roots with their counts and the
progress of a running pass, revoking one by id, and opening one of her passages with its
neighbours in the file (docs/behaviour/library.md#on-the-page).

Everything is scoped to the person: a root or passage id of someone else is `NotHers`, the
same as an id that does not exist, so ids reveal nothing."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Final

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.memory.library.indexer import LibraryLimits
from novaberg.memory.library.roots import (
    PersonPolicy,
    Refusal,
    RootRefused,
    RootStatus,
    approve,
    checked_folder,
)
from novaberg.memory.search.results import LAYER_LIBRARY, LibrarySource
from novaberg.store import library, library_reading
from novaberg.store.library import Root
from novaberg.store.library_progress import Progress, clear_progress, read_progress
from novaberg.store.library_reading import FilePassage

if TYPE_CHECKING:
    from novaberg.config import Settings

NEIGHBOURS: Final = 2
"""Passages of the same file shown before and after an opened passage."""


class NotHers(Exception):
    """No such root or passage of this person (someone else's is the same as none)."""


@dataclass(frozen=True, slots=True)
class RootView:
    """A root of hers with its counts and, while a pass runs or shortly after, its progress."""

    status: RootStatus
    progress: Progress | None


async def approve_for_person(
    pool: AsyncConnectionPool, settings: Settings, user_id: str, path: str
) -> Root:
    """Approve `path` as the person's own act: refused (`RootRefused`, one line) outside
    `NOVABERG_LIBRARY_FOLDERS`, in the data directory, over the file limit, or overlapping
    another approved folder. The policy is asked first on the path as written (its real path,
    whether or not it exists): a folder she may not approve is neither walked nor said to
    exist."""
    policy = PersonPolicy.of(settings)
    policy.check(_as_written(path))
    try:
        folder = await asyncio.to_thread(checked_folder, path, LibraryLimits.of(settings))
    except OSError as exc:  # a folder she may approve but the server may not read
        raise RootRefused(
            f"{path}: cannot be read ({exc.strerror or exc})", Refusal.NOT_A_FOLDER
        ) from None
    policy.check(folder)
    return await approve(pool, user_id, folder, by_person=True)


def _as_written(path: str) -> Path:
    """The real path `path` names, existing or not. Only a full path (`/…`, `~/…`): a
    relative one would be relative to wherever the server was started."""
    if not path.startswith(("/", "~")):
        raise RootRefused(
            f"{path}: give the folder's full path (starting with / or ~)", Refusal.MISSING
        )
    try:
        return Path(os.path.realpath(Path(path).expanduser()))
    except (OSError, RuntimeError, ValueError):  # `~someone` with no such account
        raise RootRefused(f"{path}: no such folder", Refusal.MISSING) from None


async def own_root(pool: AsyncConnectionPool, user_id: str, root_id: int) -> Root:
    async with pool.connection() as conn:
        root = await library_reading.own_root(conn, user_id, root_id)
    if root is None:
        raise NotHers(f"no approved folder {root_id} of yours")
    return root


async def views(
    pool: AsyncConnectionPool, redis: aioredis.Redis, user_id: str, root_id: int | None = None
) -> list[RootView]:
    """Her approved roots (or the one with `root_id`), oldest first, with counts and progress."""
    async with pool.connection() as conn:
        found = [
            root
            for root in await library.roots(conn, user_id)
            if root_id is None or root.id == root_id
        ]
        statuses = [RootStatus(root, await library.root_counts(conn, root.id)) for root in found]
    progress = await read_progress(redis, [root.id for root in found])
    return [RootView(status, progress.get(status.root.id)) for status in statuses]


async def revoke_own(
    pool: AsyncConnectionPool, redis: aioredis.Redis, user_id: str, root_id: int
) -> tuple[Root, int]:
    """Revoke her root `root_id`: its index is deleted; the root and how many passages went.
    A pass still running stores nothing more (store/library.py checks the root's state)."""
    root = await own_root(pool, user_id, root_id)
    async with pool.connection() as conn:
        removed = await library.revoke_root(conn, root.id)
    await clear_progress(redis, root.id)
    return root, removed


@dataclass(frozen=True, slots=True)
class OpenedPassage:
    """A passage with the passages around it in its file (`before`, `after`: file order)."""

    passage: FilePassage
    before: list[FilePassage]
    after: list[FilePassage]


def source_of(passage: FilePassage) -> LibrarySource:
    """The source a passage names (as a search hit's: absolute file, page, heading, lines)."""
    return LibrarySource(
        LAYER_LIBRARY,
        str(passage.id),
        file=str(PurePosixPath(passage.root_path) / passage.file_path),
        page=passage.page,
        heading=passage.heading,
        line_from=passage.line_from,
        line_to=passage.line_to,
    )


async def open_passage(pool: AsyncConnectionPool, user_id: str, passage_id: int) -> OpenedPassage:
    """Her passage `passage_id` with up to `NEIGHBOURS` passages of the file on each side."""
    async with pool.connection() as conn:
        rows = await library_reading.passage_around(conn, user_id, passage_id, NEIGHBOURS)
    chosen = next((row for row in rows if row.id == passage_id), None)
    if chosen is None:
        raise NotHers(f"no passage {passage_id} of yours")
    return OpenedPassage(
        chosen,
        [row for row in rows if row.position < chosen.position],
        [row for row in rows if row.position > chosen.position],
    )
