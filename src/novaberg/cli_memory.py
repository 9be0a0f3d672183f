"""`novaberg memory search --user U --character C "query"`: ranked hits of both memories."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from novaberg.config import Settings

console = Console()

memory_app = typer.Typer(help="Look into a pair's memory.", no_args_is_help=True)


@memory_app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: Annotated[str | None, typer.Option(help="User id [NOVABERG_DEFAULT_USER].")] = None,
    character: Annotated[
        str | None, typer.Option(help="Character id [NOVABERG_CHARACTER].")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="How many hits.")] = 10,
    inactive: Annotated[bool, typer.Option(help="Include decayed long-term nodes.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per hit.")] = False,
) -> None:
    """Search short- and long-term memory; print hits ranked by cosine with their source."""
    from novaberg.config import SettingsError, load_settings
    from novaberg.llm.factory import check_backend_settings

    try:
        settings = load_settings()
        check_backend_settings(settings)
    except SettingsError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    hits = asyncio.run(
        _search(
            settings,
            query,
            user or settings.default_user,
            character or settings.character,
            limit,
            inactive,
        )
    )
    if as_json:
        for rank, hit in enumerate(hits, start=1):
            typer.echo(json.dumps({"rang": rank, **hit}, ensure_ascii=False, default=str))
        return
    table = Table(title=f"memory search: {query!r}")
    for column in ("#", "source", "score", "ref", "text"):
        table.add_column(column)
    for rank, hit in enumerate(hits, start=1):
        table.add_row(str(rank), hit["source"], f"{hit['cosine']:.3f}", hit["ref"], hit["text"])
    console.print(table if hits else "no hits")


async def _search(
    settings: Settings, query: str, user: str, character: str, limit: int, inactive: bool
) -> list[dict[str, Any]]:
    from novaberg.llm.factory import build_model_layer
    from novaberg.memory.search import search_memory
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.keys import Pair
    from novaberg.store.postgres import create_pool
    from novaberg.store.redis_client import create_redis

    services = EmbeddedServices(settings)
    endpoints = await asyncio.to_thread(services.start)
    try:
        model = build_model_layer(settings)
        redis = create_redis(endpoints.redis_url)
        pool = await create_pool(endpoints.database_url, max_size=2)
        try:
            hits = await search_memory(
                redis,
                pool,
                model,
                Pair(user, character),
                query,
                k=limit,
                include_inactive=inactive,
            )
        finally:
            await pool.close()
            await redis.aclose()
            for part in (model.text, model.embedder):
                close = getattr(part, "aclose", None)
                if close is not None:
                    await close()
    finally:
        await asyncio.to_thread(services.stop)
    return [
        {"source": h.source, "cosine": h.cosine, "ref": h.ref, "text": h.text, **h.detail}
        for h in hits
    ]
