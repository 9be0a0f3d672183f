"""`novaberg character pause|activate ID [--user U]`: pause a character for one person, and
activate it again (docs/behaviour/events.md#paused-characters). The pause is that person's
alone, also for a shared built-in character; what they write meanwhile is stored and is
answered on activation."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.console import Console

from novaberg.cli.services import err_console, settings_or_exit, with_stores
from novaberg.pair import Pair

console = Console()

character_app = typer.Typer(
    help="Characters: pause one for a person, activate it again.", no_args_is_help=True
)

CharacterArg = Annotated[str, typer.Argument(help="Character id, e.g. nova.")]
UserOption = Annotated[
    str | None, typer.Option("--user", help="Whose conversation [NOVABERG_DEFAULT_USER].")
]


@character_app.command("pause")
def pause_command(character_id: CharacterArg, user: UserOption = None) -> None:
    """Pause the character for the user: messages are stored, answered on activation."""
    from novaberg.events import activation

    settings = settings_or_exit()
    pair = Pair(user or settings.default_user, character_id)

    async def work(pool: Any, redis: Any) -> None:
        await _require_known(pool, pair)
        await activation.pause(pool, pair, datetime.now(UTC))

    asyncio.run(with_stores(settings, work))
    console.print(
        f"{pair.character_id} paused for {pair.user_id}: messages are stored and answered on "
        f"activation (or end unanswered after {int(settings.pause_hold)} s, NOVABERG_PAUSE_HOLD)",
        highlight=False,
    )


@character_app.command("activate")
def activate_command(character_id: CharacterArg, user: UserOption = None) -> None:
    """Activate the character for the user; what waited is answered now."""
    from novaberg.events import activation

    settings = settings_or_exit()
    pair = Pair(user or settings.default_user, character_id)

    async def work(pool: Any, redis: Any) -> int:
        await _require_known(pool, pair)
        taken = await activation.activate(pool, redis, pair, datetime.now(UTC))
        return taken.messages

    waiting = asyncio.run(with_stores(settings, work))
    console.print(
        f"{pair.character_id} active for {pair.user_id}; {waiting} waiting message(s) "
        "queued to be answered",
        highlight=False,
    )


async def _require_known(pool: Any, pair: Pair) -> None:
    """Exit code 2 with one line when the user cannot talk to the character."""
    from novaberg.store import characters

    async with pool.connection() as conn:
        known = await characters.is_visible(conn, pair.user_id, pair.character_id)
    if not known:
        err_console.print(
            f"[red]unknown character {pair.character_id!r} for {pair.user_id}[/red]",
            highlight=False,
        )
        raise typer.Exit(2)
