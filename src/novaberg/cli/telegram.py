"""`novaberg telegram link --user U`: a one-time code that links a Telegram chat to the user.
The person sends it to the bot as `/start CODE` (docs/behaviour/reach.md#linking); the code
is the last word of the output, so a script can take it with `awk '{print $NF}'`."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.console import Console

from novaberg.cli.services import err_console, settings_or_exit, with_stores

console = Console(soft_wrap=True)

telegram_app = typer.Typer(help="Telegram: link a chat to a user.", no_args_is_help=True)

UserOption = Annotated[
    str | None, typer.Option("--user", help="Whose chat it becomes [NOVABERG_DEFAULT_USER].")
]


@telegram_app.command("link")
def link_command(user: UserOption = None) -> None:
    """Print a one-time code (valid 15 minutes); send it to the bot as /start CODE."""
    from novaberg.reach.linking import new_code
    from novaberg.store.users import InvalidUserId, check_user_id

    settings = settings_or_exit()
    user_id = user or settings.default_user
    try:
        check_user_id(user_id)
    except InvalidUserId as exc:
        err_console.print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None
    if not settings.telegram_token:
        err_console.print(
            "NOVABERG_TELEGRAM_TOKEN is not set: the server will not hear the bot until it is",
            highlight=False,
        )

    async def work(pool: Any, redis: Any) -> str:
        return await new_code(redis, user_id)

    code = asyncio.run(with_stores(settings, work))
    console.print(
        f"Send this to your bot within 15 minutes to link the chat to {user_id}: /start {code}",
        highlight=False,
    )
