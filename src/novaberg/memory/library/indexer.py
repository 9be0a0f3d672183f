"""Indexing an approved folder: incremental, resumable, bounded
(docs/behaviour/library.md#indexing).

A pass lists the folder (`paths.walk`), forgets files that are gone, and reads only files
whose size or mtime changed since they were indexed; a file read again whose content hash
is unchanged only gets its new mtime. A changed file is parsed, cut into passages, embedded
in batches and stored with its passages in one transaction (store/library.py), so a pass
that dies midway leaves every file either done or untouched, and the next pass picks up
where it stopped. A file that cannot be read or parsed is stored with its reason and no
passages (`fehler`); one over a limit is stored as `uebersprungen` with the setting to
raise. A failed embedding stores nothing for the file: the next pass tries it again.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

import numpy as np
from psycopg_pool import AsyncConnectionPool

from novaberg.config import Settings
from novaberg.llm.base import LLM
from novaberg.llm.errors import ModelError
from novaberg.memory.library.chunking import HEADING_SEPARATOR, Chunk, chunk
from novaberg.memory.library.parsers import ParseFailed, parse, parser_for
from novaberg.memory.library.paths import FileInfo, PathRefused, read_inside, walk
from novaberg.store import library
from novaberg.store.library import FileRecord, Root
from novaberg.store.text_search import text_config

log = logging.getLogger(__name__)

EMBED_BATCH: Final = 64
"""Passages embedded per model call (the import embeds archive turns the same way)."""

ProgressCallback = Callable[[int, int], Awaitable[None] | None]
"""Told (files done, files in all) once the folder is listed and after each file; may be a
coroutine function (the page's progress goes to Redis: memory/library/progress.py)."""


@dataclass(frozen=True, slots=True)
class LibraryLimits:
    """NOVABERG_LIBRARY_MAX_FILE_BYTES / _MAX_FILES / _MAX_CHUNKS."""

    max_file_bytes: int
    max_files: int
    max_chunks: int

    @classmethod
    def of(cls, settings: Settings) -> LibraryLimits:
        return cls(
            settings.library_max_file_bytes,
            settings.library_max_files,
            settings.library_max_chunks,
        )

    @classmethod
    def default(cls) -> LibraryLimits:
        fields = Settings.model_fields
        return cls(
            int(fields["library_max_file_bytes"].default),
            int(fields["library_max_files"].default),
            int(fields["library_max_chunks"].default),
        )


class RootMissing(Exception):
    """The approved folder is gone or no longer a folder; its index is left as it is."""


@dataclass(slots=True)
class IndexReport:
    """What a pass did. `failed`/`skipped`: (relative path, reason) of files newly stored
    in that state; `over_files`: whether readable files past `NOVABERG_LIBRARY_MAX_FILES`
    were left out."""

    root: str
    files: int = 0
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks: int = 0
    over_files: bool = False
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    not_embedded: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "wurzel": self.root,
            "dateien": self.files,
            "indiziert": self.indexed,
            "unveraendert": self.unchanged,
            "entfernt": self.removed,
            "abschnitte": self.chunks,
            "ueber_dateilimit": self.over_files,
            "fehler": [{"datei": p, "grund": r} for p, r in self.failed],
            "uebersprungen": [{"datei": p, "grund": r} for p, r in self.skipped],
            "nicht_eingebettet": list(self.not_embedded),
        }


def listing(root: Path, limits: LibraryLimits) -> tuple[list[FileInfo], bool]:
    """The files of a folder the library reads (by suffix), at most `max_files` of them,
    and whether there are more. The walk stops there: a folder approved by mistake (a
    whole disk) costs one limit's worth of directory reads, not a walk of everything."""
    readable = (info for info in walk(root) if parser_for(info.relative) is not None)
    found = list(itertools.islice(readable, limits.max_files + 1))
    return found[: limits.max_files], len(found) > limits.max_files


@dataclass(frozen=True, slots=True)
class _Read:
    """A changed file after reading and parsing (in a worker thread)."""

    record: FileRecord
    chunks: list[Chunk]


def _read(root: Path, info: FileInfo, limits: LibraryLimits) -> _Read:
    """Read, hash, parse and chunk one file (blocking: run in a thread)."""
    try:
        data = read_inside(root, info.relative, limits.max_file_bytes)
    except PathRefused as exc:
        status = library.FILE_SKIPPED if "larger than" in str(exc) else library.FILE_FAILED
        reason = (
            f"larger than NOVABERG_LIBRARY_MAX_FILE_BYTES ({limits.max_file_bytes} bytes)"
            if status == library.FILE_SKIPPED
            else str(exc)
        )
        return _Read(FileRecord(info.relative, "", info.mtime, info.size, status, reason), [])
    digest = hashlib.sha256(data).hexdigest()
    try:
        parsed = parse(info.relative, data, limits.max_file_bytes)
    except ParseFailed as exc:
        record = FileRecord(
            info.relative, digest, info.mtime, len(data), library.FILE_FAILED, str(exc)
        )
        return _Read(record, [])
    record = FileRecord(
        info.relative, digest, info.mtime, len(data), library.FILE_OK, "", parsed.parser
    )
    return _Read(record, chunk(parsed))


def embedding_text(relative: str, piece: Chunk) -> str:
    """What a passage's vector is made of: the file's name and heading path give a short
    passage the subject its lines leave out."""
    place = HEADING_SEPARATOR.join(p for p in (PurePosixPath(relative).stem, piece.heading) if p)
    return f"{place}\n{piece.text}"


async def _embed(model: LLM, texts: Sequence[str]) -> list[np.ndarray]:
    vectors: list[np.ndarray] = []
    for start in range(0, len(texts), EMBED_BATCH):
        batch = await model.embed(list(texts[start : start + EMBED_BATCH]))
        vectors.extend(np.asarray(v, dtype=np.float32) for v in batch)
    return vectors


async def index_root(
    pool: AsyncConnectionPool,
    model: LLM,
    root: Root,
    limits: LibraryLimits,
    *,
    progress: ProgressCallback | None = None,
) -> IndexReport:
    """One incremental pass over an approved root (the module docstring). `progress` gets
    (files done, files in all) once the folder is listed and after each file."""
    folder = Path(root.path)
    if not folder.is_dir():
        raise RootMissing(f"{root.path}: the approved folder is gone")
    found, over = await asyncio.to_thread(listing, folder, limits)
    report = IndexReport(root.path, files=len(found), over_files=over)
    async with pool.connection() as conn:
        known = await library.files(conn, root.id)
        gone = set(known) - {info.relative for info in found}
        if gone:
            report.removed = await library.delete_files(conn, root.id, gone)
        total = await library.chunk_count(conn, root.user_id)
    await _tell(progress, 0, len(found))
    for done, info in enumerate(found, start=1):
        before = known.get(info.relative)
        if before is not None and before.mtime == info.mtime and before.size == info.size:
            report.unchanged += 1
        else:
            total += await _index_file(
                pool, model, root, folder, info, before, limits, total, report
            )
        await _tell(progress, done, len(found))
    return report


async def _tell(progress: ProgressCallback | None, done: int, total: int) -> None:
    if progress is not None:
        told = progress(done, total)
        if inspect.isawaitable(told):
            await told


async def _index_file(
    pool: AsyncConnectionPool,
    model: LLM,
    root: Root,
    folder: Path,
    info: FileInfo,
    before: library.IndexedFile | None,
    limits: LibraryLimits,
    total: int,
    report: IndexReport,
) -> int:
    """Index one changed file; the change in the person's passage count."""
    read = await asyncio.to_thread(_read, folder, info, limits)
    record = read.record
    if before is not None and before.content_hash == record.content_hash and record.content_hash:
        async with pool.connection() as conn:
            await library.touch_file(conn, before.id, record.mtime)
        report.unchanged += 1
        return 0
    old = 0
    if before is not None:
        async with pool.connection() as conn:
            old = await library.file_chunk_count(conn, before.id)
    chunks = read.chunks
    if record.status == library.FILE_OK and total - old + len(chunks) > limits.max_chunks:
        record = FileRecord(
            record.path,
            record.content_hash,
            record.mtime,
            record.size,
            library.FILE_SKIPPED,
            f"the library would pass NOVABERG_LIBRARY_MAX_CHUNKS ({limits.max_chunks} passages)",
            record.parser,
        )
        chunks = []
    vectors: list[np.ndarray] = []
    if chunks:
        try:
            vectors = await _embed(model, [embedding_text(record.path, c) for c in chunks])
        except (ModelError, OSError, RuntimeError) as exc:
            log.error("library: embedding %s failed (%s); tried again next pass", record.path, exc)
            report.not_embedded.append(record.path)
            return 0
    rows = [
        library.ChunkRow(
            c.text,
            c.heading,
            c.page,
            c.line_from,
            c.line_to,
            text_config(f"{c.heading}\n{c.text}"),
            vector,
        )
        for c, vector in zip(chunks, vectors, strict=True)
    ]
    async with pool.connection() as conn:
        await library.save_file(conn, root, record, rows)
    if record.status == library.FILE_OK:
        report.indexed += 1
        report.chunks += len(rows)
    elif record.status == library.FILE_FAILED:
        report.failed.append((record.path, record.reason))
    else:
        report.skipped.append((record.path, record.reason))
    return len(rows) - old
