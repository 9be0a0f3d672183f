"""What the one-shot commands share: the settings (an invalid one ends the command with one
line and exit code 2) and the servers for one call (the embedded ones started, or joined
when a server already runs, and stopped again afterwards)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from novaberg.config import Settings

T = TypeVar("T")

err_console = Console(stderr=True, soft_wrap=True)


def fail(message: str) -> typer.Exit:
    """Print `message` as the command's one red line; raise the returned exit (code 2)."""
    err_console.print(f"[red]{message}[/red]", highlight=False)
    return typer.Exit(2)


def user_or_exit(user: str | None, settings: Settings) -> str:
    """The user a command acts for (`--user`, else NOVABERG_DEFAULT_USER), checked as the
    server checks it; exit code 2 with the reason when it is not a valid id."""
    from novaberg.store.users import InvalidUserId, check_user_id

    chosen = user or settings.default_user
    try:
        check_user_id(chosen)
    except InvalidUserId as exc:
        raise fail(str(exc)) from None
    return chosen


def progress_bar() -> Progress:
    """The bar a long command (an import, a library pass) shows on stderr."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
    )


def settings_or_exit() -> Settings:
    """The settings, checked for the model backend they name; exit code 2 with one line
    naming the variable when one is invalid."""
    from novaberg.config import SettingsError, load_settings
    from novaberg.llm.factory import check_backend_settings

    try:
        settings = load_settings()
        check_backend_settings(settings)
    except SettingsError as exc:
        err_console.print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None
    return settings


async def with_stores(settings: Settings, work: Callable[[Any, Any], Awaitable[T]]) -> T:
    """Run `work(pool, redis)` against the configured (or embedded) PostgreSQL and Redis."""
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.postgres import create_pool
    from novaberg.store.redis_client import create_redis

    services = EmbeddedServices(settings)
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


async def with_services(settings: Settings, work: Callable[[Any], Awaitable[T]]) -> T:
    """Run `work(context)` with Redis, PostgreSQL and the model layer the settings name
    (the embedded servers started or joined for the call)."""
    from novaberg.api.context import AppContext
    from novaberg.runtime.services import EmbeddedServices

    services = EmbeddedServices(settings)
    endpoints = await asyncio.to_thread(services.start)
    try:
        ctx = await AppContext.open(settings, endpoints)
        try:
            return await work(ctx)
        finally:
            await ctx.aclose()
    finally:
        await asyncio.to_thread(services.stop)
