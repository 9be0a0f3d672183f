"""`novaberg pixie status` and `novaberg pixie run JOB [--user U --character C]`: the
operator's view of and hand on the background jobs and Nova's impulses."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from novaberg.cli.services import settings_or_exit, with_stores

console = Console()
T = TypeVar("T")

pixie_app = typer.Typer(help="Background jobs and Nova's impulses.", no_args_is_help=True)


async def status_report(redis: Any, pool: Any) -> dict[str, Any]:
    """Lanes and jobs (schedule, last run), failures, stack and queue sizes per pair."""
    from novaberg.impulses import shadow_queue
    from novaberg.impulses import stack as impulse_stack
    from novaberg.pixie.jobs import default_jobs
    from novaberg.store import keys

    jobs = []
    for job in default_jobs():
        schedule = await redis.hgetall(keys.pixie_schedule(job.name))
        async with pool.connection() as conn:
            cur = await conn.execute(
                "SELECT erstellt_am, ergebnis, dauer_ms FROM hintergrund_log WHERE job = %s"
                " ORDER BY id DESC LIMIT 1",
                (job.name,),
            )
            last = await cur.fetchone()
        jobs.append(
            {
                "job": job.name,
                "lane": job.lane,
                "priority": job.priority,
                "interval": job.interval,
                "next_run": schedule.get("next_run"),
                "versuche": schedule.get("versuche"),
                "letzter_lauf": last["erstellt_am"].isoformat() if last else None,
                "ergebnis": last["ergebnis"] if last else None,
            }
        )
    lanes = {}
    for lane in sorted({j["lane"] for j in jobs}):
        lanes[lane] = {"laeuft": bool(await redis.exists(keys.pixie_running(lane)))}
    failures = [json.loads(r) for r in await redis.lrange(keys.pixie_failed(), 0, 9)]
    pairs: dict[str, dict[str, Any]] = {}

    def row(key: str) -> dict[str, Any]:
        return pairs.setdefault(key, {"stapel": 0, "warteschlange": 0, "geparkt": []})

    for pair in await impulse_stack.pairs(redis):
        row(str(pair))["stapel"] = await impulse_stack.size(redis, pair)
    for (user_id, character_id), count in (await shadow_queue.sizes(pool)).items():
        row(f"{user_id}:{character_id}")["warteschlange"] = count
    for pair in await impulse_stack.parked_pairs(redis):
        found = await impulse_stack.parked(redis, pair)
        if found:
            row(str(pair))["geparkt"] = [
                {"id": p.get("id"), "aufgabe": p.get("aufgabe"), "thema": p.get("thema"),
                 "versuche": p.get("versuche"), "grund": p.get("grund_geparkt")}
                for p in found
            ]  # fmt: skip
    return {
        "pausiert": bool(await redis.exists(keys.pixie_paused())),
        "lanes": lanes,
        "jobs": jobs,
        "gescheitert": failures,
        "paare": pairs,
    }


@pixie_app.command("status")
def status_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Lanes, last runs, failures, stack and queue sizes per pair."""
    settings = settings_or_exit()
    report = asyncio.run(with_stores(settings, lambda pool, redis: status_report(redis, pool)))
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False, default=str))
        return
    console.print(
        f"pixie {'paused' if report['pausiert'] else 'active'}; lanes: "
        + ", ".join(f"{k} {'busy' if v['laeuft'] else 'idle'}" for k, v in report["lanes"].items())
    )
    table = Table(title="jobs")
    for column in ("job", "lane", "priority", "interval s", "last run", "result", "attempts"):
        table.add_column(column)
    for job in report["jobs"]:
        table.add_row(
            job["job"],
            job["lane"],
            f"{job['priority']:.2f}",
            f"{job['interval']:.0f}",
            str(job["letzter_lauf"] or "-"),
            str(job["ergebnis"] or "-"),
            str(job["versuche"] or 0),
        )
    console.print(table)
    pairs = Table(title="impulses per pair")
    for column in ("pair", "stack", "shadow queue", "parked"):
        pairs.add_column(column)
    for pair, sizes in sorted(report["paare"].items()):
        pairs.add_row(
            pair, str(sizes["stapel"]), str(sizes["warteschlange"]), str(len(sizes["geparkt"]))
        )
    console.print(pairs if report["paare"] else "no impulses queued")
    for pair, sizes in sorted(report["paare"].items()):
        for item in sizes["geparkt"]:
            console.print(
                f"[yellow]parked[/yellow] {pair} {item['id']} ({item['aufgabe']}, "
                f"{item['thema']}) after {item['versuche']} attempts: {item['grund']}"
            )
    for failure in report["gescheitert"]:
        console.print(f"[red]failed[/red] {failure}")


@pixie_app.command("run")
def run_command(
    job: Annotated[str, typer.Argument(help="Job name, e.g. nachfragen, recherche.")],
    user: Annotated[str | None, typer.Option(help="Only this user's tasks.")] = None,
    character: Annotated[str | None, typer.Option(help="Only this character's tasks.")] = None,
) -> None:
    """Run one job now (due or not); prints its result."""
    settings = settings_or_exit()

    async def work(redis: Any, pool: Any) -> Any:
        from novaberg.llm.factory import build_model_layer
        from novaberg.memory.library.indexer import LibraryLimits
        from novaberg.pixie.jobs import build_scheduler
        from novaberg.websearch import provider_from_settings

        scheduler = build_scheduler(
            redis,
            pool,
            build_model_layer(settings),
            character=settings.character,
            web=provider_from_settings(settings),
            library_limits=LibraryLimits.of(settings),
        )
        scheduler.context.services["scope"] = (user, character)
        await scheduler.register()
        try:
            return await scheduler.run_now(job)
        except KeyError as exc:
            console.print(f"[red]{exc.args[0]}[/red]")
            raise typer.Exit(2) from None

    result = asyncio.run(with_stores(settings, lambda pool, redis: work(redis, pool)))
    typer.echo(
        json.dumps(
            {"job": result.job, "status": result.status, "detail": result.detail,
             "fehler": result.error},
            ensure_ascii=False,
            default=str,
        )
    )  # fmt: skip
    if result.status != "ran":
        raise typer.Exit(1)
