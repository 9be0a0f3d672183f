"""`novaberg library add|list|remove|reindex|search`: the folders Nova may read.

The person's own command is the approval: `add` needs no question back (the chat asks).
Bad input — a path that does not exist, is not a folder, holds more files than
NOVABERG_LIBRARY_MAX_FILES, or is not approved — ends with one line and exit code 2.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from novaberg.cli.services import fail, progress_bar, settings_or_exit, user_or_exit, with_services

console = Console()
err_console = Console(stderr=True, soft_wrap=True)

library_app = typer.Typer(help="The folders Nova may read.", no_args_is_help=True)

UserOption = Annotated[str | None, typer.Option(help="User id [NOVABERG_DEFAULT_USER].")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
PathArgument = Annotated[Path, typer.Argument(help="The folder.")]


async def _index(ctx: Any, roots: list[Any]) -> list[dict[str, Any]]:
    from novaberg.memory.library.indexer import LibraryLimits, RootMissing
    from novaberg.memory.library.watcher import locked_pass

    limits = LibraryLimits.of(ctx.settings)
    reports = []
    with progress_bar() as bar:
        for root in roots:
            task = bar.add_task(f"indexing {root.path}", total=None)
            try:
                report = await locked_pass(
                    ctx.pool, ctx.redis, ctx.model, root, limits, progress=_advance(bar, task)
                )
            except RootMissing as exc:
                err_console.print(f"[yellow]{exc}[/yellow]", highlight=False)
                continue
            if report is None:
                err_console.print(
                    f"[yellow]{root.path}: a worker is indexing it right now[/yellow]",
                    highlight=False,
                )
                continue
            reports.append(report.as_json())
    return reports


def _advance(bar: Progress, task: Any) -> Any:
    def advance(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return advance


def _print_reports(reports: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        for report in reports:
            typer.echo(json.dumps(report, ensure_ascii=False))
        return
    for report in reports:
        console.print(
            f"{report['wurzel']}: {report['indiziert']} file(s) indexed into "
            f"{report['abschnitte']} passage(s), {report['unveraendert']} unchanged, "
            f"{report['entfernt']} removed",
            highlight=False,
            soft_wrap=True,  # one line however long the folder's path: it is read and grepped
        )
        for kind, label in (("fehler", "not readable"), ("uebersprungen", "skipped")):
            for item in report[kind]:
                err_console.print(
                    f"[yellow]{item['datei']}: {label} ({item['grund']})[/yellow]", highlight=False
                )
        if report["ueber_dateilimit"]:
            err_console.print(
                "[yellow]more files than NOVABERG_LIBRARY_MAX_FILES: the rest are not "
                "indexed[/yellow]"
            )
        for path in report["nicht_eingebettet"]:
            err_console.print(
                f"[yellow]{path}: embedding failed; tried again at the next reindex[/yellow]",
                highlight=False,
            )


@library_app.command("add")
def add_command(path: PathArgument, user: UserOption = None, as_json: JsonOption = False) -> None:
    """Approve a folder for reading and index it at once."""
    from novaberg.memory.library.indexer import LibraryLimits
    from novaberg.memory.library.roots import RootRefused, approve, checked_folder

    settings = settings_or_exit()
    user_id = user_or_exit(user, settings)
    try:
        folder = checked_folder(path, LibraryLimits.of(settings))
    except RootRefused as exc:
        raise fail(str(exc)) from None

    async def run(ctx: Any) -> list[dict[str, Any]]:
        try:
            root = await approve(ctx.pool, user_id, folder)
        except RootRefused as exc:
            raise fail(str(exc)) from None
        return await _index(ctx, [root])

    _print_reports(asyncio.run(with_services(settings, run)), as_json)


@library_app.command("reindex")
def reindex_command(
    path: Annotated[Path | None, typer.Argument(help="One approved folder (default: all).")] = None,
    user: UserOption = None,
    as_json: JsonOption = False,
) -> None:
    """Index the approved folders again: changed files are read, deleted ones forgotten."""
    from novaberg.memory.library.roots import RootRefused, root_of, statuses

    settings = settings_or_exit()
    user_id = user_or_exit(user, settings)

    async def run(ctx: Any) -> list[dict[str, Any]]:
        if path is None:
            roots = [status.root for status in await statuses(ctx.pool, user_id)]
        else:
            try:
                roots = [await root_of(ctx.pool, user_id, path)]
            except RootRefused as exc:
                raise fail(str(exc)) from None
        return await _index(ctx, roots)

    reports = asyncio.run(with_services(settings, run))
    if not reports and not as_json:
        console.print(f"no approved folders for {user_id}")
    _print_reports(reports, as_json)


@library_app.command("list")
def list_command(user: UserOption = None, as_json: JsonOption = False) -> None:
    """The approved folders with their files and passages."""
    from novaberg.memory.library.roots import statuses

    settings = settings_or_exit()
    user_id = user_or_exit(user, settings)
    found = asyncio.run(with_services(settings, lambda ctx: statuses(ctx.pool, user_id)))
    rows: list[dict[str, Any]] = [
        {
            "pfad": status.root.path,
            "freigegeben_am": status.root.approved_at.isoformat(),
            "dateien": status.counts["ok"],
            "fehler": status.counts["fehler"],
            "uebersprungen": status.counts["uebersprungen"],
            "abschnitte": status.counts["chunks"],
        }
        for status in found
    ]
    if as_json:
        for row in rows:
            typer.echo(json.dumps(row, ensure_ascii=False))
        return
    if not rows:
        console.print(f"no approved folders for {user_id}")
        return
    table = Table(title=f"library of {user_id}")
    for column in ("folder", "approved", "files", "not readable", "skipped", "passages"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row["pfad"],
            row["freigegeben_am"][:16],
            str(row["dateien"]),
            str(row["fehler"]),
            str(row["uebersprungen"]),
            str(row["abschnitte"]),
        )
    console.print(table)


@library_app.command("remove")
def remove_command(path: PathArgument, user: UserOption = None) -> None:
    """Revoke a folder: its index is deleted, nothing of it is read again."""
    from novaberg.memory.library.roots import RootRefused, revoke

    settings = settings_or_exit()
    user_id = user_or_exit(user, settings)

    async def run(ctx: Any) -> int:
        try:
            return await revoke(ctx.pool, user_id, path)
        except RootRefused as exc:
            raise fail(str(exc)) from None

    removed = asyncio.run(with_services(settings, run))
    console.print(f"{path}: revoked, {removed} passage(s) deleted", highlight=False)


@library_app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: UserOption = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="How many hits.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per hit.")] = False,
) -> None:
    """Search the approved folders' passages (words and vectors, fused); each hit names its
    file, page or heading and line range."""
    from novaberg.memory.library.search import search_library

    settings = settings_or_exit()
    user_id = user_or_exit(user, settings)
    hits = asyncio.run(
        with_services(
            settings, lambda ctx: search_library(ctx.pool, ctx.model, user_id, query, limit)
        )
    )
    if as_json:
        for rank, hit in enumerate(hits, start=1):
            typer.echo(json.dumps(hit.as_json(rank), ensure_ascii=False))
        return
    table = Table(title=f"library search: {query!r}")
    for column in ("#", "score", "where", "text"):
        table.add_column(column)
    for rank, hit in enumerate(hits, start=1):
        table.add_row(str(rank), f"{hit.score:.4f}", hit.source.label(), hit.text)
    console.print(table if hits else "no hits")
