"""`novaberg import chat|card`: bring a conversation history or a character from elsewhere.

A file is read and checked completely before any service starts: a bad file ends with one
line and exit code 2, and nothing is stored. That includes a file over a limit (too large,
too many lines or lorebook entries, a field too long, nested too deep) and an import that
would pass the archive quota: the operator's own command applies the server's limits too,
since they say what one person's data may grow to, and the refusal names the setting to
raise for a run that should pass them (`NOVABERG_MAX_IMPORT_LINES=500000 novaberg import
chat …`). What only protects the API process — the body's arrival, one import at a time —
does not apply here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from novaberg.cli.services import fail, progress_bar, settings_or_exit, user_or_exit, with_services
from novaberg.imports.limits import ImportLimits

console = Console()
err_console = Console(stderr=True, soft_wrap=True)

import_app = typer.Typer(help="Import chat histories and character cards.", no_args_is_help=True)

FileArgument = Annotated[
    Path, typer.Argument(exists=False, dir_okay=False, help="The file to import.")
]


def _read(path: Path, check_size: Callable[[int], None]) -> bytes:
    """The file's bytes; `check_size` refuses (TooLarge) before a byte is read."""
    from novaberg.imports.limits import TooLarge

    try:
        check_size(path.stat().st_size)
        return path.read_bytes()
    except OSError as exc:
        raise fail(f"{path}: cannot read ({exc.strerror or exc})") from None
    except TooLarge as exc:
        raise fail(f"{path}: {exc}") from None


@import_app.command("chat")
def chat_command(
    file: FileArgument,
    character: Annotated[
        str | None, typer.Option(help="Character id [NOVABERG_CHARACTER].")
    ] = None,
    user: Annotated[str | None, typer.Option(help="User id [NOVABERG_DEFAULT_USER].")] = None,
    distil: Annotated[
        bool,
        typer.Option(help="Also run the turns through salience and short-term condensing."),
    ] = False,
    pin: Annotated[bool, typer.Option(help="Keep the turns beyond the yearly purge.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Archive a SillyTavern chat (.jsonl), ChatGPT's conversations.json or a plain JSONL
    ({"id","speaker","text","time"}). Resumable: running it again adds only what is missing."""
    from novaberg.bounded_json import TooDeep
    from novaberg.imports.chat_formats import ChatFormatError, parse_chat
    from novaberg.imports.limits import TooLarge

    settings = settings_or_exit()
    limits = ImportLimits.of(settings)
    user_id = user_or_exit(user, settings)
    character_id = character or settings.character
    try:
        data = _read(file, limits.check_import_size)
        parsed = parse_chat(data, tz=settings.tz, name=file.name, limits=limits)
    except (ChatFormatError, TooLarge, TooDeep) as exc:
        raise fail(f"{file}: {exc}") from None
    for problem in parsed.problems:
        err_console.print(f"[yellow]{file}: {problem} (skipped)[/yellow]", highlight=False)
    if parsed.problem_count > len(parsed.problems):
        more = parsed.problem_count - len(parsed.problems)
        err_console.print(f"[yellow]… and {more} more[/yellow]")
    report = asyncio.run(
        with_services(
            settings,
            lambda ctx: _import_chat(
                ctx, parsed, user_id, character_id, distil, pin, limits.archive_turns
            ),
        )
    )
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
        return
    line = (
        f"{report['neu']} new turn(s) archived for {user_id}/{character_id} "
        f"({report['format']}; {report['vorhanden']} already there, "
        f"{report['uebersprungen_gesamt']} line(s) skipped, {report['ignoriert']} not a turn)"
    )
    if "destilliert" in report:
        done = report["destilliert"]
        line += f"; distilled {done['turns']} turn(s) into {done['kzg_eintraege']} memories"
    console.print(line)


async def _import_chat(
    ctx: Any,
    parsed: Any,
    user_id: str,
    character_id: str,
    distil: bool,
    pin: bool,
    max_turns: int,
) -> dict[str, Any]:
    from novaberg.graph.contract import GraphDeps
    from novaberg.imports.chat_import import check_room, import_chat
    from novaberg.imports.distil import distil_import
    from novaberg.imports.limits import QuotaFull
    from novaberg.pair import Pair
    from novaberg.store import characters

    async with ctx.pool.connection() as conn:
        if not await characters.is_visible(conn, user_id, character_id):
            raise fail(
                f"unknown character {character_id!r} for {user_id}: import its card first "
                "(novaberg import card FILE --user USER) or choose --character"
            )
    pair = Pair(user_id, character_id)
    try:
        source_ids = [turn.source_id for turn in parsed.turns]
        await check_room(ctx.pool, pair, parsed.format, source_ids, max_turns)
    except QuotaFull as exc:
        raise fail(str(exc)) from None
    with progress_bar() as bar:
        task = bar.add_task("archiving", total=len(parsed.turns))
        report = await import_chat(
            ctx.pool,
            ctx.model,
            pair,
            parsed,
            pinned=pin,
            progress=lambda n: bar.advance(task, n),
        )
        result: dict[str, Any] = report.as_json()
        if distil:
            deps = GraphDeps(ctx.settings, ctx.redis, ctx.pool, ctx.model)
            step = bar.add_task("distilling", total=len(parsed.turns))
            try:
                distilled = await distil_import(
                    deps,
                    pair,
                    parsed.format,
                    report.source_ids,
                    gate=ctx.gate,
                    progress=lambda n: bar.advance(step, n),
                )
            finally:
                assert deps.log is not None
                await deps.log.close()
            bar.update(step, total=bar.tasks[step].completed)
            result["destilliert"] = distilled.as_json()
    return result


@import_app.command("card")
def card_command(
    file: FileArgument,
    user: Annotated[
        str | None,
        typer.Option(help="Who owns the character; their memory gets the lorebook."),
    ] = None,
    character_id: Annotated[
        str | None, typer.Option("--id", help="Character id (default: from the name).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Create a character from a character card (V1/V2/V3; PNG with its card chunk, or JSON).
    The lorebook becomes long-term knowledge of the user's pair with the character."""
    from novaberg.bounded_json import TooDeep
    from novaberg.imports.card_import import resolve_id
    from novaberg.imports.cards import CardError, read_card
    from novaberg.imports.limits import TooLarge

    settings = settings_or_exit()
    limits = ImportLimits.of(settings)
    user_id = user_or_exit(user, settings)
    try:
        card = read_card(_read(file, limits.check_card_size), limits)
        resolve_id(card, character_id)
    except (CardError, TooLarge, TooDeep) as exc:
        raise fail(f"{file}: {exc}") from None
    report = asyncio.run(
        with_services(settings, lambda ctx: _import_card(ctx, card, user_id, character_id))
    )
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
        return
    state = "created" if report["neu"] else "already there"
    console.print(
        f"character {report['character_id']!r} ({report['name']}) {state}; "
        f"{report['lore_neu']} of {report['lore']} lorebook entries stored for {user_id}"
        + ("; its picture is the avatar" if report["avatar"] else "")
    )


async def _import_card(ctx: Any, card: Any, user_id: str, character_id: str | None) -> dict:
    from novaberg.imports.card_import import CardConflict, import_card
    from novaberg.store.characters import TooManyCharacters

    try:
        report = await import_card(
            ctx.pool,
            ctx.model,
            card,
            user_id=user_id,
            now=datetime.now(UTC),
            character_id=character_id,
            max_characters=ctx.settings.max_characters,
        )
    except (CardConflict, TooManyCharacters) as exc:
        raise fail(str(exc)) from None
    return report.as_json()
