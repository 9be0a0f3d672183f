"""The `novaberg` command: `serve`, `api`, `worker`, `user`, `character`, `chat`, `turn`,
`memory`, `import`, `library`, `pixie`, `doctor`, `version`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from novaberg import __version__
from novaberg.config import Settings, SettingsError, load_settings

app = typer.Typer(
    help="Novaberg: a self-hosted companion-chat server.",
    no_args_is_help=True,
    add_completion=False,
)
T = TypeVar("T")
console = Console()
err_console = Console(stderr=True, soft_wrap=True)


def _settings(quiet: bool = False, **overrides: object) -> Settings:
    """Settings, or one red line naming the bad variable and exit code 2.

    `quiet` logs warnings only (the command's own output is the report)."""
    from novaberg.llm.factory import check_backend_settings

    try:
        settings = load_settings(**{k: v for k, v in overrides.items() if v is not None})
        check_backend_settings(settings)
    except SettingsError as exc:
        err_console.print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None
    level = max(logging.WARNING, logging.getLevelName(settings.log_level)) if quiet else None
    logging.basicConfig(
        level=level or settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    return settings


@app.command()
def version() -> None:
    """Print the installed version."""
    console.print(f"novaberg {__version__}")


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address [NOVABERG_HOST].")] = None,
    port: Annotated[int | None, typer.Option(help="Port [NOVABERG_PORT].")] = None,
) -> None:
    """Start the embedded services (if not configured), serve the API and the chat page,
    and run the consumers in the same process."""
    from novaberg.api import server
    from novaberg.api.app import create_app

    settings = _settings(host=host, port=port)
    _require_free_port(settings)
    try:
        application = create_app(settings, consumers=True, freeze_heap=True)
    except SettingsError as exc:
        err_console.print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None
    console.print(f"Novaberg {__version__} on http://{settings.host}:{settings.port}")
    server.run(application, settings)


def _require_free_port(settings: Settings) -> None:
    """Refuse at once, before any service starts, when the port is taken (e.g. a second
    `make serve`): uvicorn would only notice after the whole startup."""
    import socket

    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((settings.host, settings.port))
        except OSError as exc:
            err_console.print(
                f"[red]{settings.host}:{settings.port} is not available ({exc.strerror}): is "
                "Novaberg already running? Stop it, or choose another NOVABERG_PORT.[/red]",
                highlight=False,
            )
            raise typer.Exit(2) from None


@app.command()
def api(
    host: Annotated[str | None, typer.Option(help="Bind address [NOVABERG_HOST].")] = None,
    port: Annotated[int | None, typer.Option(help="Port [NOVABERG_PORT].")] = None,
) -> None:
    """Serve only the HTTP/WebSocket API (run `novaberg worker` processes beside it)."""
    from novaberg.api import server
    from novaberg.api.app import create_app

    settings = _settings(host=host, port=port)
    _require_free_port(settings)
    application = create_app(settings, consumers=False, freeze_heap=True)
    console.print(f"Novaberg API {__version__} on http://{settings.host}:{settings.port}")
    server.run(application, settings)


@app.command()
def worker() -> None:
    """Run the prompt and event consumers against the configured Redis/PostgreSQL."""
    settings = _settings()
    console.print(f"Novaberg worker {__version__}")
    asyncio.run(_run_worker(settings))


async def _run_worker(settings: Settings) -> None:
    """Wire a worker to the services; stop cleanly on SIGINT/SIGTERM."""
    import signal

    from novaberg.api.context import AppContext
    from novaberg.events.worker import Worker, close_graphs, graph_runtime
    from novaberg.runtime.heap import freeze_startup_heap
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.failed_turns import FailedTurnLog

    services = EmbeddedServices(settings)
    endpoints = await asyncio.to_thread(services.start)
    try:
        ctx = await AppContext.open(settings, endpoints)
        try:
            await ctx.warm_up()
            graphs = graph_runtime(settings, ctx.redis, ctx.pool, ctx.model)
            freeze_startup_heap()  # as `serve`/`api` do once built: no full-heap stalls
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            runner = Worker(
                ctx.redis,
                graphs,
                ctx.gate,
                failures=FailedTurnLog(ctx.pool),
                startup_patience=settings.startup_wait,
            )
            await runner.start()
            try:
                await stop.wait()
            finally:
                await runner.stop()
                await close_graphs(graphs)
        finally:
            await ctx.aclose()
    finally:
        await asyncio.to_thread(services.stop)


user_app = typer.Typer(help="Users and their API tokens.", no_args_is_help=True)
app.add_typer(user_app, name="user")


@user_app.command("add")
def user_add(
    name: Annotated[str, typer.Argument(help="User id (letters, digits, _ . -).")],
    label: Annotated[str, typer.Option(help="Note stored with the token.")] = "cli",
) -> None:
    """Create the user (if new) and print a new API token. It is shown only once."""
    from novaberg.store.users import InvalidUserId, issue_token

    settings = _settings(quiet=True)
    try:
        issued = asyncio.run(_with_pool(settings, lambda pool: issue_token(pool, name, label)))
    except InvalidUserId as exc:
        err_console.print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None
    err_console.print(f"token for [bold]{issued.user_id}[/bold] (stored hashed, shown once):")
    print(issued.token)


@user_app.command("list")
def user_list() -> None:
    """List users and how many tokens each has."""
    from novaberg.store.users import list_users

    settings = _settings(quiet=True)
    rows = asyncio.run(_with_pool(settings, list_users))
    table = Table(title="users")
    for column in ("user_id", "display_name", "tokens"):
        table.add_column(column)
    for row in rows:
        table.add_row(str(row["user_id"]), str(row["display_name"]), str(row["tokens"]))
    console.print(table)


def _register_tokens() -> None:
    from novaberg.cli.tokens import revoke_command, tokens_command

    user_app.command("tokens")(tokens_command)
    user_app.command("revoke")(revoke_command)


_register_tokens()


async def _with_pool(settings: Settings, work: Callable[[Any], Awaitable[T]]) -> T:
    """Run `work(pool)` against the configured (or embedded) PostgreSQL."""
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.postgres import create_pool

    services = EmbeddedServices(settings)
    endpoints = await asyncio.to_thread(services.start)
    try:
        pool = await create_pool(endpoints.database_url, max_size=2)
        try:
            return await work(pool)
        finally:
            await pool.close()
    finally:
        await asyncio.to_thread(services.stop)


@app.command()
def doctor() -> None:
    """Check Redis, PostgreSQL, the chat model and embeddings; print a fix for each ✘."""
    from novaberg.api.doctor import Check, check_health
    from novaberg.runtime.services import EmbeddedServices

    settings = _settings(quiet=True)
    services = EmbeddedServices(settings)
    checks: list[Check] = []
    with console.status("checking services and models ..."):
        try:
            endpoints = services.start()
        except Exception as exc:
            endpoints = None
            checks.append(
                Check(
                    "services",
                    False,
                    f"{type(exc).__name__}: {exc}",
                    "see the message; NOVABERG_HOME, NOVABERG_REDIS_URL and "
                    "NOVABERG_DATABASE_URL choose the services",
                )
            )
        try:
            checks += asyncio.run(check_health(settings, endpoints))
        finally:
            services.stop()
    table = Table(title=f"novaberg doctor ({__version__})", show_lines=True)
    table.add_column("", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("detail")
    failed = any(not check.ok for check in checks)
    if failed:
        table.add_column("fix")
    for check in checks:
        mark = "[green]✔[/green]" if check.ok else "[red]✘[/red]"
        row = [mark, check.name, check.detail] + ([check.fix] if failed else [])
        table.add_row(*row)
    console.print(table)
    if failed:
        raise typer.Exit(1)


def _register_turn() -> None:
    from novaberg.cli.turn import turn_command

    app.command("turn")(turn_command)


_register_turn()


def _register_chat() -> None:
    from novaberg.cli.chat import chat_command

    app.command("chat")(chat_command)


_register_chat()


def _register_memory() -> None:
    from novaberg.cli.memory import memory_app

    app.add_typer(memory_app, name="memory")


_register_memory()


def _register_import() -> None:
    from novaberg.cli.imports import import_app

    app.add_typer(import_app, name="import")


_register_import()


def _register_library() -> None:
    from novaberg.cli.library import library_app

    app.add_typer(library_app, name="library")


_register_library()


def _register_pixie() -> None:
    from novaberg.cli.pixie import pixie_app

    app.add_typer(pixie_app, name="pixie")


_register_pixie()


def _register_character() -> None:
    from novaberg.cli.characters import character_app

    app.add_typer(character_app, name="character")


_register_character()


def _register_telegram() -> None:
    from novaberg.cli.telegram import telegram_app

    app.add_typer(telegram_app, name="telegram")


_register_telegram()


def main() -> None:
    app()


def _register_transfer() -> None:
    from novaberg.cli.transfer import export_command, restore_command

    app.command("export")(export_command)
    app.command("restore")(restore_command)


_register_transfer()
