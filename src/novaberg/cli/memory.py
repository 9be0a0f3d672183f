"""`novaberg memory search|pin`: find in a pair's memory (with sources); keep archived turns."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from novaberg.cli.services import settings_or_exit, with_services
from novaberg.config import Settings

console = Console()
err_console = Console(stderr=True, soft_wrap=True)
T = TypeVar("T")

memory_app = typer.Typer(help="Look into a pair's memory.", no_args_is_help=True)

UserOption = Annotated[str | None, typer.Option(help="User id [NOVABERG_DEFAULT_USER].")]
CharacterOption = Annotated[str | None, typer.Option(help="Character id [NOVABERG_CHARACTER].")]


@memory_app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: UserOption = None,
    character: CharacterOption = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="How many hits.")] = 10,
    inactive: Annotated[bool, typer.Option(help="Include decayed long-term nodes.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per hit.")] = False,
) -> None:
    """Search the archive, short- and long-term memory (words and vectors, fused); print
    each hit with its layer, score, time and the turns it rests on."""
    settings = settings_or_exit()
    result = asyncio.run(
        with_services(
            settings,
            lambda ctx: _search(
                ctx,
                settings,
                query,
                user or settings.default_user,
                character or settings.character,
                limit,
                inactive,
            ),
        )
    )
    hits, window = result
    if window is not None:
        err_console.print(f"time window: {window['von']} – {window['bis']} ({window['art']})")
    if as_json:
        for hit in hits:
            typer.echo(json.dumps(hit, ensure_ascii=False, default=str))
        return
    table = Table(title=f"memory search: {query!r}")
    for column in ("#", "layer", "score", "time", "text", "sources"):
        table.add_column(column)
    for hit in hits:
        table.add_row(
            str(hit["rank"]),
            hit["layer"],
            f"{hit['score']:.4f}",
            (hit["time"] or "")[:16],
            hit["text"],
            "\n".join(_source_label(source) for source in hit["sources"]),
        )
    console.print(table if hits else "no hits")


def _source_label(source: dict[str, Any]) -> str:
    label = f"{source['layer']}:{source['id']}"
    if source.get("source_id"):
        label += f" ({source['source_id']})"
    elif source.get("turn_id"):
        label += f" (turn {source['turn_id']})"
    return label


@memory_app.command("pin")
def pin_command(
    ids: Annotated[
        list[int] | None, typer.Argument(help="Archive row ids (`id` of a hit).")
    ] = None,
    user: UserOption = None,
    character: CharacterOption = None,
    all_rows: Annotated[
        bool, typer.Option("--all", help="Every archived turn of the pair.")
    ] = False,
    unpin: Annotated[bool, typer.Option(help="Let them be purged after a year again.")] = False,
) -> None:
    """Keep archived turns beyond the yearly purge (or release them with --unpin)."""
    if not ids and not all_rows:
        err_console.print("[red]name archive ids or --all[/red]", highlight=False)
        raise typer.Exit(2)
    settings = settings_or_exit()
    from novaberg.pair import Pair
    from novaberg.store import archive

    pair = Pair(user or settings.default_user, character or settings.character)

    async def pin(ctx: Any) -> int:
        async with ctx.pool.connection() as conn:
            return await archive.set_pinned(conn, pair, None if all_rows else ids, not unpin)

    changed = asyncio.run(with_services(settings, pin))
    console.print(f"{changed} archived turn(s) {'unpinned' if unpin else 'pinned'}")


async def _search(
    ctx: Any,
    settings: Settings,
    query: str,
    user: str,
    character: str,
    limit: int,
    inactive: bool,
) -> tuple[list[dict[str, Any]], dict[str, str] | None]:
    from novaberg.memory.search.hybrid import search_memory
    from novaberg.memory.search.results import SearchOptions
    from novaberg.pair import Pair

    result = await search_memory(
        ctx.redis,
        ctx.pool,
        ctx.model,
        Pair(user, character),
        query,
        now=datetime.now(UTC),
        tz=settings.tz,
        options=SearchOptions(limit=limit, include_inactive=inactive),
    )
    hits = [hit.as_json(rank) for rank, hit in enumerate(result.hits, start=1)]
    return hits, result.window.as_json() if result.window else None
