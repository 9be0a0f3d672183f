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
        note = stage_note(row["inhalt"] or {})
        stages.add_row(
            row["quelle"],
            row["node"],
            f"{row['dauer_ms']:.1f}" if row["dauer_ms"] is not None else "-",
            str(row["modell_aufrufe"]),
            row["ergebnis"],
            note,
        )
    console.print(stages)
    for line in understanding_lines(rows):
        console.print(f"  {line}")
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


def understanding_lines(rows: list[dict[str, Any]]) -> list[str]:
    """What the turn understood and how that steered it, from the nodes' pipeline_log rows
    (docs/behaviour/nodes.md#situation): where the situation's reading came from and its
    acute objects, what the router saw as `[LAGE]`, the planner's order, an impulse's
    bridge to its trigger and whether the composer got it."""
    lines: list[str] = []
    for row in rows:
        detail = row.get("inhalt") or {}
        node = row.get("node")
        if node == "situation_reader":
            lines.append(
                f"situation reading (path 1): {detail['ausfall']}"
                if detail.get("ausfall")
                else f"situation reading (path 1): objects {detail.get('objekte')}, "
                f"about {detail.get('bezug') or '-'}"
            )
        elif node == "situation_node":
            line = f"situation: {detail.get('stand')}"
            if detail.get("quelle"):
                line += f" from {detail['quelle']}"
            if detail.get("akut"):
                line += f", acute {detail['akut']}"
            if "bruecke" in detail:
                line += (
                    f", bridge to {detail.get('ausloeser_turn_id')} by {detail['bruecke_durch']}"
                    if detail["bruecke"]
                    else ", no bridge"
                )
            lines.append(line)
        elif node == "router" and detail.get("lage"):
            lines.append(f"router saw [LAGE]: {', '.join(detail['lage'])}")
        elif node == "planner" and detail.get("plan"):
            order = " → ".join(f"{t['agent']}({t['teil'] or '…'})" for t in detail["plan"])
            by = (
                f" (acute first: {', '.join(detail['nach_objekt'])})"
                if "nach_objekt" in detail
                else ""
            )
            lines.append(f"plan: {order}{by}")
        elif node == "composer" and detail.get("bruecke"):
            bridge = detail["bruecke"]
            lines.append(
                f"composer [SACHLAGE-BRUECKE]: {bridge.get('ausloeser_turn_id')} "
                f"by {bridge.get('gefunden_durch')}"
            )
    return lines


NOTE_CHARS = 80
"""Width of the note column: a failure, or the row's short facts."""


def stage_note(inhalt: dict[str, Any]) -> str:
    """A stage's note: its failure if it has one, else the plain values of its
    pipeline_log row (`tor=eigener_gedanke`, `entscheidung=fallback`, `zielsog=0.3`) —
    what the node decided, in the order it logged it; lists and maps stay in the row."""
    failure = inhalt.get("ausfall") or inhalt.get("fehler")
    if failure:
        return str(failure)[:NOTE_CHARS]
    parts = []
    for key, value in inhalt.items():
        if value is None or isinstance(value, list | dict):
            continue
        shown = f"{value:.3g}" if isinstance(value, float) else str(value)
        parts.append(f"{key}={shown}")
    return " ".join(parts)[:NOTE_CHARS]


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
