"""Reading inside an approved folder and nowhere else (docs/behaviour/library.md#path-safety).

Every byte the library reads goes through `read_inside` and every listing through
`walk`. Both work on real paths: a root is stored resolved (`resolve_root`), a file is
resolved again right before it is opened and must still lie below its root — so a symlink
that leads out of the folder, a `..` in a relative path, or a folder swapped for a link
after the walk are refused. Only regular files are opened: device files, sockets and FIFOs
are refused by their type before opening and again by `fstat` after (`O_NOFOLLOW` and
`O_NONBLOCK`: the last component cannot be a link, and a FIFO put in a file's place cannot
make the read wait forever); where the opened descriptor really points is checked once
more (a folder on the way swapped for a link between resolving and opening). Directory links are never followed while walking (a link loop
or a link to `/` cannot make the walk leave the root).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


class PathRefused(Exception):
    """A path the library may not read; the message says why in one line."""


@dataclass(frozen=True, slots=True)
class FileInfo:
    """A regular file found below a root: its path relative to the root (POSIX form),
    size and mtime at the walk."""

    relative: str
    size: int
    mtime: float


def resolve_root(path: str | Path) -> Path:
    """The real path of a folder to approve: `~` expanded, links resolved. Refused when it
    does not exist or is not a directory."""
    candidate = Path(path).expanduser()
    try:
        real = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        raise PathRefused(f"{path}: no such folder") from None
    if not real.is_dir():
        raise PathRefused(f"{path}: not a directory")
    return real


def inside(root: Path, real: Path) -> bool:
    """Whether the real path `real` is `root` or lies below it."""
    return real == root or root in real.parents


def _relative_parts(relative: str) -> tuple[str, ...]:
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise PathRefused(f"{relative}: not a path inside the folder")
    return parts


def resolve_inside(root: Path, relative: str) -> Path:
    """The real path of `relative` below `root`; refused when it (or a link on its way)
    leads outside, or names `..` or an absolute path."""
    candidate = root.joinpath(*_relative_parts(relative))
    real = Path(os.path.realpath(candidate))
    if not inside(root, real):
        raise PathRefused(f"{relative}: leads outside the approved folder")
    return real


def read_inside(root: Path, relative: str, max_bytes: int) -> bytes:
    """The bytes of the regular file `relative` below `root`, at most `max_bytes` (a larger
    file is refused, not cut). The one place the library opens a file."""
    real = resolve_inside(root, relative)
    try:
        before = os.lstat(real)
    except OSError as exc:
        raise PathRefused(f"{relative}: cannot read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(before.st_mode):
        raise PathRefused(f"{relative}: not a regular file")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise PathRefused(f"{relative}: cannot read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(handle.fileno())
        if not stat.S_ISREG(opened.st_mode) or opened.st_ino != before.st_ino:
            raise PathRefused(f"{relative}: changed while being opened")
        if not inside(root, _opened_path(handle.fileno(), real)):
            raise PathRefused(f"{relative}: leads outside the approved folder")
        if opened.st_size > max_bytes:
            raise PathRefused(f"{relative}: larger than {max_bytes} bytes")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise PathRefused(f"{relative}: larger than {max_bytes} bytes")
    return data


def _opened_path(fd: int, expected: Path) -> Path:
    """Where the open descriptor really points (Linux: /proc/self/fd): a folder on the way
    swapped for a link between resolving and opening shows here. Elsewhere the path that
    was resolved."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return expected


def walk(root: Path) -> Iterator[FileInfo]:
    """The regular files below `root`, sorted by relative path per folder. A link to a file
    inside the root is listed under its own name; a link that leads outside, a link to a
    directory, and anything that is not a regular file (devices, sockets, FIFOs) are left
    out. Hidden entries (a leading dot: `.git`, editor swap files) are left out too."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            listed = _entries(root, folder)
        except OSError:
            continue
        subfolders = []
        for entry in listed:
            if entry.name.startswith("."):
                continue
            path = folder / entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(path)
                    continue
                info = _regular_file(root, path, entry.is_symlink())
            except OSError:
                continue
            if info is not None:
                yield info
        stack.extend(reversed(subfolders))


def _entries(root: Path, folder: Path) -> list[os.DirEntry[str]]:
    """The entries of `folder`, sorted by name; opened without following a link and
    listed only when the opened directory really lies below `root` (a folder swapped for a
    link after it was listed as a folder)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not inside(root, _opened_path(fd, folder)):
            return []
        with os.scandir(fd) as entries:
            return sorted(entries, key=lambda entry: entry.name)
    finally:
        os.close(fd)


def _regular_file(root: Path, path: Path, link: bool) -> FileInfo | None:
    real = Path(os.path.realpath(path)) if link else path
    if link and not inside(root, real):
        return None
    status = os.stat(real, follow_symlinks=False)
    if not stat.S_ISREG(status.st_mode):
        return None
    return FileInfo(path.relative_to(root).as_posix(), status.st_size, status.st_mtime)
