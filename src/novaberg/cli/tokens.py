"""`novaberg user tokens USER` and `novaberg user revoke TOKEN|--label L [--user U]|--all USER`:
an operator sees a user's tokens (ids and labels, never the tokens) and revokes them.

A revocation deletes the rows, then announces the digests on Redis: every running API
process refuses the tokens from its next request on and closes their sockets with 4401
(docs/behaviour/events.md#revoked-tokens). Without Redis the rows are deleted all the same,
and the servers refuse the tokens once their caches expire (30 s).
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from novaberg.cli.services import settings_or_exit, with_stores
from novaberg.config import Settings

console = Console()
err_console = Console(stderr=True, soft_wrap=True)
T = TypeVar("T")


@dataclass(frozen=True)
class Selection:
    """Which tokens to revoke: exactly one of `token`, `label` (optionally one user's) or
    every token of `all_of`."""

    token: str | None = None
    label: str | None = None
    user: str | None = None
    all_of: str | None = None


@dataclass(frozen=True)
class Revocation:
    """What a revocation did: how many tokens of which users, and whether the running
    servers were told at once."""

    per_user: dict[str, int]
    announced: bool

    @property
    def count(self) -> int:
        return sum(self.per_user.values())


def selection_or_exit(
    token: str | None, label: str | None, user: str | None, all_of: str | None
) -> Selection:
    """The one form the arguments name, or one red line and exit code 2 (before any service
    starts)."""
    from novaberg.store.users import InvalidUserId, check_user_id

    forms = [form for form in (token, label, all_of) if form is not None]
    problem = None
    if len(forms) != 1:
        problem = "name what to revoke: TOKEN, --label L [--user U] or --all USER (one of them)"
    elif user is not None and label is None:
        problem = "--user only narrows --label"
    elif token is not None and not token.strip():
        problem = "the token is empty"
    elif label is not None and not label:
        problem = "the label is empty"
    if problem is None:
        try:
            for name in (user, all_of):
                if name is not None:
                    check_user_id(name)
        except InvalidUserId as exc:
            problem = str(exc)
    if problem is not None:
        err_console.print(f"[red]{problem}[/red]", highlight=False)
        raise typer.Exit(2)
    return Selection(token.strip() if token else None, label, user, all_of)


async def revoke_selected(pool: Any, redis: Any, selection: Selection) -> Revocation:
    """Delete the selected tokens, then announce their digests to the running servers."""
    from redis.exceptions import RedisError

    from novaberg.store.token_revocation import announce
    from novaberg.store.users import revoke_all, revoke_label, revoke_token

    if selection.token is not None:
        revoked = await revoke_token(pool, selection.token)
    elif selection.label is not None:
        revoked = await revoke_label(pool, selection.label, selection.user)
    else:
        assert selection.all_of is not None
        revoked = await revoke_all(pool, selection.all_of)
    announced = True
    if revoked:
        try:
            await announce(redis, [t.digest for t in revoked])
        except (RedisError, OSError, TimeoutError):
            announced = False
    return Revocation(dict(Counter(t.user_id for t in revoked)), announced)


def revoke_command(
    token: Annotated[
        str | None,
        typer.Argument(
            help="The token to revoke; '-' reads it from standard input (keeps it out of "
            "the shell's history).",
            show_default=False,
        ),
    ] = None,
    label: Annotated[
        str | None, typer.Option("--label", help="Revoke every token with this label.")
    ] = None,
    user: Annotated[
        str | None, typer.Option("--user", help="With --label: only this user's tokens.")
    ] = None,
    all_of: Annotated[
        str | None, typer.Option("--all", metavar="USER", help="Revoke every token of USER.")
    ] = None,
) -> None:
    """Revoke tokens: running servers refuse them at once and close their sockets (4401).
    Exit code 1 if nothing matched."""
    if token == "-":
        token = sys.stdin.readline()
    selection = selection_or_exit(token, label, user, all_of)
    settings = _settings()
    done = asyncio.run(
        with_stores(settings, lambda pool, redis: revoke_selected(pool, redis, selection))
    )
    if not done.count:
        err_console.print("no token matched; nothing revoked", highlight=False)
        raise typer.Exit(1)
    users = ", ".join(f"{name} ({n})" for name, n in sorted(done.per_user.items()))
    noun = "token" if done.count == 1 else "tokens"
    console.print(f"revoked {done.count} {noun}: {users}", highlight=False)
    if not done.announced:
        err_console.print(
            "Redis unreachable: running servers refuse these tokens within 30 s "
            "(when their token caches expire)",
            highlight=False,
        )


def tokens_command(
    name: Annotated[str, typer.Argument(help="User id.")],
) -> None:
    """List a user's tokens: id, label, created (never the tokens themselves)."""
    from novaberg.store.users import InvalidUserId, check_user_id, list_tokens

    try:
        check_user_id(name)
    except InvalidUserId as exc:
        err_console.print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None
    settings = _settings()
    rows = asyncio.run(with_stores(settings, lambda pool, _redis: list_tokens(pool, name)))
    table = Table(title=f"tokens of {name}")
    for column in ("id", "label", "erstellt_am"):
        table.add_column(column)
    for row in rows:
        table.add_row(str(row.token_id), row.label, row.created_at.isoformat(timespec="seconds"))
    console.print(table)


def _settings() -> Settings:
    import logging

    settings = settings_or_exit()
    logging.basicConfig(level=max(logging.WARNING, logging.getLevelName(settings.log_level)))
    return settings
