"""`novaberg turn "text"`: one full turn in-process — the developer's window into it.

Runs HumanGraph and CharacterGraph without queues as the workers run them (the
CharacterGraph starts once the HumanGraph has stored the user's turn; the HumanGraph's
salience runs on meanwhile) against the configured (or embedded) Redis/PostgreSQL and
model, and prints every stage as it ends (both graphs interleaved), where the answer was
released, the stage table with durations and model calls, the answer, both emotions and
the tribunal votes. With `--prompts` it then prints every model call of the turn, in call
order: the node that made it, its schema ("text" for free text) and every message it sent
— what a person tuning the prompts for their own model needs (`llm/recording.py`).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from novaberg.config import Settings
from novaberg.wire import GRAPH_CHARACTER

console = Console()


def turn_command(
    text: Annotated[str, typer.Argument(help="What the user says.")],
    user: Annotated[str | None, typer.Option(help="User id [NOVABERG_DEFAULT_USER].")] = None,
    character: Annotated[
        str | None, typer.Option(help="Character id [NOVABERG_CHARACTER].")
    ] = None,
    llm: Annotated[
        str | None, typer.Option(help="Model backend: local | openai | scripted [NOVABERG_LLM].")
    ] = None,
    prompts: Annotated[
        bool,
        typer.Option(
            "--prompts", help="Then print every model call: node, schema and the full prompt."
        ),
    ] = False,
) -> None:
    """Run one turn (HumanGraph, then CharacterGraph) in-process and show every stage."""
    from novaberg.config import SettingsError, load_settings
    from novaberg.events.intake import IntakeError, check_text
    from novaberg.llm.factory import check_backend_settings
    from novaberg.store.users import InvalidUserId, check_user_id

    overrides: dict[str, Any] = {"llm": llm} if llm else {}
    try:
        settings = load_settings(**overrides)
        check_backend_settings(settings)
        text = check_text(text)  # the same rules as POST /chat
        user_id = check_user_id(user or settings.default_user)
    except (SettingsError, InvalidUserId) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    except IntakeError as exc:
        console.print(f"[red]{exc.code}: {exc.message}[/red]")
        raise typer.Exit(2) from None
    asyncio.run(_turn(settings, text, user_id, character or settings.character, prompts=prompts))


async def _turn(
    settings: Settings, text: str, user: str, character: str, *, prompts: bool = False
) -> None:
    from novaberg.agents.deps import GraphDeps
    from novaberg.agents.registry import agent_migrations, discover_agents
    from novaberg.api.context import AppContext
    from novaberg.graph.contract import release_ready
    from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
    from novaberg.llm.recording import RecordingModelLayer
    from novaberg.pair import Pair
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.pipeline_log import read_turn

    services = EmbeddedServices(settings, extra_migrations=agent_migrations())
    with console.status("starting services and model ..."):
        endpoints = await asyncio.to_thread(services.start)
    try:
        ctx = await AppContext.open(settings, endpoints)
        try:
            with console.status(f"loading model ({ctx.model.backend_name}) ..."):
                await ctx.warm_up()
            model = RecordingModelLayer(ctx.model) if prompts else ctx.model
            deps = GraphDeps(settings, ctx.redis, ctx.pool, model)
            runtime = GraphRuntime(deps, discover_agents())

            released: list[str] = []

            def on_stage(graph: str, node: str, state: dict[str, Any], ms: float) -> None:
                console.print(f"  [dim]{graph:<9}[/dim] {node:<22} {ms:>9.1f} ms")
                if graph == GRAPH_CHARACTER and not released and release_ready(state):
                    released.append(node)
                    console.print("  [green]── answer released ──[/green]")

            console.print(f"[bold]turn[/bold] {user}:{character} — {text!r}")
            try:
                result = await run_turn_inprocess(runtime, Pair(user, character), text, on_stage)
            except Exception as exc:  # the CharacterGraph failed: say so, exit non-zero
                console.print(f"[red]CharacterGraph failed: {type(exc).__name__}: {exc}[/red]")
                raise typer.Exit(1) from None
            finally:
                assert deps.log is not None
                await deps.log.close()
            rows = await read_turn(ctx.pool, result.turn_id)
            _report(result, rows)
            if isinstance(model, RecordingModelLayer):
                _print_prompts(model.calls)
        finally:
            await ctx.aclose()
    finally:
        await asyncio.to_thread(services.stop)


def _emotion_line(personality: Any) -> str:
    if personality is None:
        return "-"
    e = personality.emotion
    return (
        f"{e.emotion} (arousal {e.arousal:.2f}, vector {e.emotions_vector or '-'}, "
        f"mode {e.mode}, style {e.language_style}, dynamic {e.relationship_dynamic})"
    )


def _report(result: Any, rows: list[dict[str, Any]]) -> None:
    from novaberg.store.pipeline_log import KIND_NODE

    stages = Table(title=f"turn {result.turn_id}", show_edge=False)
    for column in ("graph", "node", "ms", "model calls", "result", "note"):
        stages.add_column(column)
    for row in rows:
        if row["art"] != KIND_NODE:
            continue
        inhalt = row["inhalt"] or {}
        note = inhalt.get("ausfall") or inhalt.get("fehler") or ""
        stages.add_row(
            row["quelle"],
            row["node"],
            f"{row['dauer_ms']:.1f}" if row["dauer_ms"] is not None else "-",
            str(row["modell_aufrufe"]),
            row["ergebnis"],
            str(note)[:60],
        )
    console.print(stages)
    released = (
        f"answer released after {result.released_ms:.0f} ms (at {result.release_node})"
        if result.released_ms is not None
        else "[red]no answer released[/red]"
    )
    console.print(
        f"HumanGraph {result.human_ms:.0f} ms, CharacterGraph {result.character_ms:.0f} ms; "
        f"{released}"
    )
    if result.event_payload.get("pfad1_ausfall"):
        console.print(f"[red]path 1 failed:[/red] {result.event_payload['pfad1_ausfall']}")

    cstate = result.character_state
    console.print(f"\n[bold]answer[/bold] ({result.response.get('tribunal_verdict') or '-'}):")
    console.print(result.response.get("nachricht") or "[red](no answer)[/red]")
    console.print(
        f"\n[bold]user emotion[/bold]  {_emotion_line(result.human_state.get('external'))}"
    )
    console.print(f"[bold]nova emotion[/bold]  {_emotion_line(cstate.get('internal'))}")
    if cstate.get("nova_emotion_conflict"):
        console.print("[yellow]emotional conflict between user and Nova[/yellow]")
    console.print(
        f"salience: user {result.human_state.get('human_salience')}, "
        f"intentions {result.human_state.get('user_intentions')}"
    )

    votes = cstate.get("tribunal_votes") or []
    if votes:
        table = Table(title="tribunal", show_edge=False)
        for column in ("judge", "score", "directives", "vote", "reasoning"):
            table.add_column(column)
        for vote in votes:
            table.add_row(
                str(vote.get("role")),
                _num(vote.get("score")),
                _num(vote.get("directives_score")),
                str(vote.get("vote") or f"unreadable: {vote.get('failure')}"),
                str(vote.get("reasoning") or "")[:70],
            )
        console.print(table)
    rounds = cstate.get("correction_round") or 0
    if rounds:
        console.print(f"correction rounds: {rounds}")


def _print_prompts(calls: list[Any]) -> None:
    """Every recorded model call, in call order: `#n graph/node · schema · role`, then each
    message under its role. Printed without markup: prompts hold `[BLOCK]` names."""
    console.print(f"\n[bold]prompts[/bold] ({len(calls)} model calls, in call order)")
    for number, call in enumerate(calls, 1):
        console.rule(f"#{number} {call.source or '(no node)'} · {call.schema} · {call.role}")
        for message in call.messages:
            console.print(
                f"[{message.get('role', '?')}]", markup=False, highlight=False, soft_wrap=True
            )
            console.print(message.get("content", ""), markup=False, highlight=False, soft_wrap=True)


def _num(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "-"
