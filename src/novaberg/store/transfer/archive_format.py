"""The archive's layout: a zip with `manifest.json`, one JSON file per table, the Redis
state and the characters' avatars as image files (docs/export.md).

The manifest carries `version`; a reader refuses a newer version with a sentence rather
than guessing at fields it does not know. Version 1 is the first.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

FORMAT: Final = "novaberg-export"
VERSION: Final = 1
"""Raised when the layout or the meaning of a field changes; docs/export.md lists them."""

MANIFEST: Final = "manifest.json"
REDIS_FILE: Final = "redis.json"


class ArchiveRefused(ValueError):
    """The archive cannot be restored here; the message is a sentence for the person."""


@dataclass
class Archive:
    """An archive's content in memory: rows per table, Redis entries, avatar files."""

    user_id: str
    character_id: str | None
    embed_dim: int
    exported_at: str
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    redis: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    """Avatars by their path in the archive (`avatars/<character>.<ext>`)."""
    version: int = VERSION

    def manifest(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": self.version,
            "exported_at": self.exported_at,
            "user_id": self.user_id,
            "character_id": self.character_id,
            "embed_dim": self.embed_dim,
            "tables": {name: len(rows) for name, rows in self.tables.items()},
            "redis_keys": len(self.redis),
            "files": sorted(self.files),
        }

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(MANIFEST, json.dumps(self.manifest(), ensure_ascii=False, indent=2))
            for name, rows in self.tables.items():
                zf.writestr(f"tables/{name}.json", json.dumps(rows, ensure_ascii=False))
            zf.writestr(REDIS_FILE, json.dumps(self.redis, ensure_ascii=False))
            for path, data in self.files.items():
                zf.writestr(path, data, compress_type=zipfile.ZIP_STORED)  # images are packed
        return buffer.getvalue()

    def write(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".part")
        tmp.write_bytes(self.to_bytes())
        tmp.replace(path)  # never a half-written archive under the final name


def read_archive(data: bytes) -> Archive:
    """Parse an archive; `ArchiveRefused` for anything that is not one this version reads."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ArchiveRefused("This file is not a Novaberg export (not a zip archive).") from None
    with zf:
        names = set(zf.namelist())
        if MANIFEST not in names:
            raise ArchiveRefused("This file is not a Novaberg export (no manifest.json).")
        manifest = json.loads(zf.read(MANIFEST))
        if manifest.get("format") != FORMAT:
            raise ArchiveRefused("This file is not a Novaberg export (unknown format).")
        version = int(manifest.get("version", 0))
        if version > VERSION:
            raise ArchiveRefused(
                f"This export has format version {version}; this Novaberg reads versions up "
                f"to {VERSION}. Update Novaberg, then restore it again."
            )
        if version < 1:
            raise ArchiveRefused("This export names no valid format version.")
        archive = Archive(
            user_id=str(manifest["user_id"]),
            character_id=manifest.get("character_id"),
            embed_dim=int(manifest["embed_dim"]),
            exported_at=str(manifest.get("exported_at", "")),
            version=version,
        )
        for name in manifest.get("tables", {}):
            archive.tables[name] = json.loads(zf.read(f"tables/{name}.json"))
        if REDIS_FILE in names:
            archive.redis = json.loads(zf.read(REDIS_FILE))
        for path in manifest.get("files", []):
            archive.files[path] = zf.read(path)
    return archive
