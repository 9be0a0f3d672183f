"""Approving, listing and revoking the folders the library may read
(docs/behaviour/library.md#roots). A folder is stored by its real path; revoking it
deletes its index in the same transaction (store/library.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Final

from psycopg_pool import AsyncConnectionPool

from novaberg.memory.library.indexer import LibraryLimits, listing
from novaberg.memory.library.paths import PathRefused, inside, resolve_root
from novaberg.store import library
from novaberg.store.library import Root

if TYPE_CHECKING:
    from novaberg.config import Settings

SYSTEM_FOLDERS: Final = (Path("/proc"), Path("/sys"), Path("/dev"), Path("/run"))
"""Kernel and runtime file systems: their "regular files" are process memory, environment
variables and sockets' state, never a person's documents."""


class Refusal(Enum):
    """Why a folder was refused, as a code: the message is for the operator's log and
    command line, the code lets the chat say it in the person's words."""

    MISSING = "missing"
    NOT_A_FOLDER = "not_a_folder"
    SYSTEM_FOLDER = "system_folder"
    TOO_MANY_FILES = "too_many_files"
    OPERATOR_ONLY = "operator_only"
    DATA_HOME = "data_home"
    NOT_OFFERED = "not_offered"
    OVERLAPS_OWN = "overlaps_own"
    OVERLAPS_OTHER = "overlaps_other"
    NOT_APPROVED = "not_approved"


class RootRefused(Exception):
    """A folder that cannot be approved or revoked; the message says why in one line,
    `reason` which rule refused it."""

    def __init__(self, message: str, reason: Refusal) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class RootStatus:
    """An approved root with its counts (files indexed, failed, skipped; passages)."""

    root: Root
    counts: dict[str, int]


def real_folder(path: str | Path) -> Path:
    """The real path of an existing folder (`~` expanded, links resolved); nothing inside
    it is opened or listed."""
    try:
        return resolve_root(path)
    except PathRefused as exc:
        exists = os.path.exists(Path(path).expanduser())
        raise RootRefused(str(exc), Refusal.NOT_A_FOLDER if exists else Refusal.MISSING) from None


def checked_folder(path: str | Path, limits: LibraryLimits) -> Path:
    """The real path of a folder fit to approve: it exists, is a directory, and holds no
    more readable files than `NOVABERG_LIBRARY_MAX_FILES`."""
    return counted_folder(path, limits)[0]


def counted_folder(path: str | Path, limits: LibraryLimits) -> tuple[Path, int]:
    """`checked_folder` and how many files of it the library reads (one walk for both).
    Blocking: the walk lists up to `max_files` + 1 entries."""
    folder = real_folder(path)
    if any(folder == system or system in folder.parents for system in SYSTEM_FOLDERS):
        raise RootRefused(
            f"{path}: a system folder is never part of the library", Refusal.SYSTEM_FOLDER
        )
    found, over = listing(folder, limits)
    if over:
        raise RootRefused(
            f"{path}: more files than NOVABERG_LIBRARY_MAX_FILES ({limits.max_files}); "
            "approve a smaller folder or raise the setting",
            Refusal.TOO_MANY_FILES,
        )
    return folder, len(found)


@dataclass(frozen=True, slots=True)
class PersonPolicy:
    """Where a person may approve a folder herself (chat, page, API), as opposed to the
    operator's `novaberg library add`: only below `NOVABERG_LIBRARY_FOLDERS`, never the data
    directory (keys, databases) nor anything holding it. A signed-in person must not be able
    to make the server read what its operator did not offer."""

    allowed: tuple[Path, ...]
    data_home: Path

    @classmethod
    def of(cls, settings: Settings) -> PersonPolicy:
        parts = [part for part in settings.library_folders.split(":") if part.strip()]
        allowed = tuple(Path(os.path.realpath(Path(part.strip()).expanduser())) for part in parts)
        return cls(allowed, Path(os.path.realpath(settings.home.expanduser())))

    def check(self, folder: Path) -> None:
        """Refuse a checked folder (`checked_folder`) a person may not approve herself."""
        if not self.allowed:
            raise RootRefused(
                f"{folder}: folders are approved by the operator here "
                "(NOVABERG_LIBRARY_FOLDERS is empty)",
                Refusal.OPERATOR_ONLY,
            )
        if (
            folder == self.data_home
            or inside(self.data_home, folder)
            or inside(folder, self.data_home)
        ):
            raise RootRefused(
                f"{folder}: the server's data directory is never part of the library",
                Refusal.DATA_HOME,
            )
        if not any(folder == parent or inside(parent, folder) for parent in self.allowed):
            offered = ", ".join(str(parent) for parent in self.allowed)
            raise RootRefused(
                f"{folder}: only folders below {offered} can be approved here",
                Refusal.NOT_OFFERED,
            )


def person_folder(
    path: str | Path, policy: PersonPolicy, limits: LibraryLimits
) -> tuple[Path, int]:
    """`counted_folder` for a folder the person approves herself (chat, page), checked in
    an order that never lists a folder she may not approve: its real path (nothing inside
    opened), then the policy, only then the walk that counts its files. Blocking."""
    folder = real_folder(path)
    policy.check(folder)
    return counted_folder(folder, limits)


async def approve(
    pool: AsyncConnectionPool, user_id: str, folder: Path, *, by_person: bool = False
) -> Root:
    """Approve a checked folder (`checked_folder`) for `user_id`. A folder inside another
    of hers, or holding one, is refused: its files would be indexed twice and revoking one
    would leave them readable through the other. `by_person` (chat, page, API): a folder
    overlapping another person's approved folder is refused too — her consent covers her
    files, not someone else's."""
    async with pool.connection() as conn:
        for root in await library.roots(conn, user_id):
            other = Path(root.path)
            if other != folder and (inside(other, folder) or inside(folder, other)):
                raise RootRefused(
                    f"{folder}: overlaps the approved folder {other}; remove that one first",
                    Refusal.OVERLAPS_OWN,
                )
        if by_person:
            for root in await library.roots(conn, None):
                other = Path(root.path)
                if root.user_id != user_id and (
                    other == folder or inside(other, folder) or inside(folder, other)
                ):
                    raise RootRefused(
                        f"{folder}: overlaps another person's approved folder",
                        Refusal.OVERLAPS_OTHER,
                    )
        return await library.approve_root(conn, user_id, str(folder))


def _stored_path(path: str | Path) -> str:
    """The path a root was stored under: its real path while it exists, else the absolute
    path as given (a folder deleted from disk can still be revoked)."""
    try:
        return str(resolve_root(path))
    except PathRefused:
        return os.path.abspath(Path(path).expanduser())


async def revoke(pool: AsyncConnectionPool, user_id: str, path: str | Path) -> int:
    """Revoke an approved folder of `user_id`: its index is deleted; how many passages."""
    root = await root_of(pool, user_id, path)
    async with pool.connection() as conn:
        return await library.revoke_root(conn, root.id)


async def root_of(pool: AsyncConnectionPool, user_id: str, path: str | Path) -> Root:
    """The approved root of `user_id` at `path`; refused when there is none."""
    async with pool.connection() as conn:
        root = await library.root_by_path(conn, user_id, _stored_path(path))
    if root is None:
        raise RootRefused(f"{path}: not an approved folder of {user_id}", Refusal.NOT_APPROVED)
    return root


async def statuses(pool: AsyncConnectionPool, user_id: str | None) -> list[RootStatus]:
    """The approved roots (of `user_id`, or everyone's) with their counts."""
    async with pool.connection() as conn:
        found = await library.roots(conn, user_id)
        return [RootStatus(root, await library.root_counts(conn, root.id)) for root in found]
