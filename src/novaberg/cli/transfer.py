"""`novaberg export --user U [--character C] FILE` and `novaberg restore FILE [--as-user V]`:
a person's data as one archive (docs/export.md), taken to another installation.

Both print one progress line per table on stderr, so a long export shows it is moving;
a refused archive (newer format, other embedding size, ids in use) ends with its sentence
and exit code 2.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from novaberg.cli.services import settings_or_exit
from novaberg.config import Settings

err_console = Console(stderr=True, soft_wrap=True)


def _progress(line: str) -> None:
    err_console.print(line, highlight=False)


async def _with_stores(settings: Settings, work: Any) -> Any:
    """Like `with_stores`, with the agents' tables migrated too (a fresh installation
    that is restored into has never run the API, which adds them)."""
    from novaberg.agents.registry import agent_migrations
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.postgres import create_pool
    from novaberg.store.redis_client import create_redis

    services = EmbeddedServices(settings, extra_migrations=agent_migrations())
    endpoints = await asyncio.to_thread(services.start)
    try:
        redis = create_redis(endpoints.redis_url, cluster=endpoints.redis_cluster)
        pool = await create_pool(endpoints.database_url, max_size=2)
        try:
            return await work(pool, redis)
        finally:
            await pool.close()
            await redis.aclose()
    finally:
        await asyncio.to_thread(services.stop)


def export_command(
    file: Annotated[Path, typer.Argument(help="Archive to write (a .zip).")],
    user: Annotated[str, typer.Option("--user", help="Whose data to export.")],
    character: Annotated[
        str | None, typer.Option("--character", help="Only this character's pair.")
    ] = None,
) -> None:
    """Export a person's history, memories, tasks, settings and characters to FILE."""
    from novaberg.store.transfer.export import export_person

    settings = settings_or_exit()

    async def work(pool: Any, redis: Any) -> Any:
        return await export_person(
            pool,
            redis,
            user,
            character_id=character,
            embed_dim=settings.embed_dim,
            progress=_progress,
        )

    archive = asyncio.run(_with_stores(settings, work))
    if not archive.tables.get("users"):
        err_console.print(f"[red]There is no user {user!r} in this installation.[/red]")
        raise typer.Exit(2)
    archive.write(file)
    rows = sum(len(r) for r in archive.tables.values())
    _progress(
        f"exported {rows} rows, {len(archive.redis)} Redis keys, "
        f"{len(archive.files)} avatars to {file}"
    )


def restore_command(
    file: Annotated[Path, typer.Argument(help="Archive written by `novaberg export`.")],
    as_user: Annotated[
        str | None, typer.Option("--as-user", help="Restore under this user name instead.")
    ] = None,
) -> None:
    """Restore an export into this installation; restoring it again adds nothing."""
    from novaberg.store.transfer.archive_format import ArchiveRefused, read_archive
    from novaberg.store.transfer.restore import restore_archive
    from novaberg.store.users import InvalidUserId, check_user_id

    settings = settings_or_exit()
    try:
        archive = read_archive(file.read_bytes())
        if as_user is not None:
            check_user_id(as_user)
    except (ArchiveRefused, InvalidUserId, OSError) as exc:
        err_console.print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None

    async def work(pool: Any, redis: Any) -> Any:
        return await restore_archive(pool, redis, archive, as_user=as_user, progress=_progress)

    try:
        report = asyncio.run(_with_stores(settings, work))
    except ArchiveRefused as exc:
        err_console.print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None
    _progress(f"restored for {report.user_id}: {report.total_added} new items")
