"""Per-call parse rate of structured output against a model server nobody here wrote.

Starts llama-cpp-python's own server (`python -m llama_cpp.server`) with the bundled
SmolLM2-135M GGUF, then runs N full turns in-process (HumanGraph + CharacterGraph, as
`novaberg turn` does) with the openai backend pointed at it and
`NOVABERG_LLM_STRUCTURED=auto` (the probe finds `json_object_schema` there). Per schema it
counts how each structured call ended (the model layer's accounting): valid at the first
answer, valid after the retry with the hint, or unreadable after that retry. A turn that
fails outright is counted as failed, with its reason.

Baseline, measured in the same run against the same server: the same texts with
`NOVABERG_LLM_STRUCTURED=none` — the schema only stated in the prompt, as on a server that
honours no form — which is what the probed form buys.

    .venv/bin/python bench/structured_parse.py [--turns 20] [--baseline-turns 3] [--budget-s S]

`--budget-s` bounds each mode's time on a loaded machine: no new turn starts after it, and
the summary's `turns` says how many ran.

Prints one JSON line per turn, one summary line per mode, then a table. On two shared
cores a turn takes one to a few minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _llama_server import LlamaServer
from _machine import cpu_times, steal_percent

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TEXTS = [
    "Hallo Nova, wie geht es dir heute?",
    "Ich ziehe nächste Woche nach Köln!",
    "Heute war ein anstrengender Tag.",
    "Meine Schwester heißt Lena und wohnt in Hamburg.",
    "Was hältst du von Regen im Sommer?",
    "Ich habe morgen um 10 Uhr einen Arzttermin.",
    "Kannst du mir einen Tipp zum Einschlafen geben?",
    "Ich freue mich so auf das Wochenende!",
    "Mein Kater Moritz ist krank, ich mache mir Sorgen.",
    "Erzähl mir etwas über dich.",
]

LLM_TIMEOUT = 300.0
"""Seconds per call: the judges queue on the one server thread."""

OUTCOMES = ("erster_versuch", "nach_hinweis", "unlesbar")

log = logging.getLogger("bench.structured_parse")


async def run_turns(
    home: Path, server_url: str, form: str, user: str, turns: int, budget_s: float | None
) -> list[dict[str, Any]]:
    from novaberg.agents.deps import GraphDeps
    from novaberg.agents.registry import agent_migrations, discover_agents
    from novaberg.config import load_settings
    from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
    from novaberg.llm.accounting import track_calls
    from novaberg.llm.factory import build_model_layer
    from novaberg.pair import Pair
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.postgres import create_pool
    from novaberg.store.redis_client import create_redis

    settings = load_settings(
        home=home,
        pixie=False,
        llm="openai",
        llm_url=server_url,
        llm_timeout=LLM_TIMEOUT,
        llm_structured=form,
        embed="local",
    )
    services = EmbeddedServices(settings, extra_migrations=agent_migrations())
    endpoints = await asyncio.to_thread(services.start)
    redis = create_redis(endpoints.redis_url)
    pool = await create_pool(endpoints.database_url)
    records: list[dict[str, Any]] = []
    try:
        model = build_model_layer(settings)
        await model.embedder.warm_up()  # type: ignore[attr-defined]
        deps = GraphDeps(settings, redis, pool, model)
        runtime = GraphRuntime(deps, discover_agents()).compile()
        pair = Pair(user, settings.character)
        deadline = None if budget_s is None else time.monotonic() + budget_s
        for index in range(turns):
            if deadline is not None and time.monotonic() >= deadline:
                print(json.dumps({"form": form, "stopped": "budget", "after": index}), flush=True)
                break
            started = time.perf_counter()
            failure: str | None = None
            path1: str | None = None
            answer = ""
            with track_calls() as stats:
                try:
                    result = await run_turn_inprocess(runtime, pair, TEXTS[index % len(TEXTS)])
                    answer = str((result.response or {}).get("nachricht") or "")
                    path1 = result.event_payload.get("pfad1_ausfall")
                    if not answer:
                        failure = "no answer"
                except Exception as exc:  # the turn failed: counted, never hidden
                    failure = f"{type(exc).__name__}: {exc}"[:300]
            record = {
                "form": form,
                "turn": index + 1,
                "wall_s": round(time.perf_counter() - started, 1),
                "model_calls": stats.calls,
                "structured": stats.structured_summary(),
                "failed": failure,
                "path1_failed": path1,
                "answer": answer[:120],
            }
            records.append(record)
            print(json.dumps(record, ensure_ascii=False), flush=True)
        probes = getattr(model.text, "probes", {})
        for url, outcome in probes.items():
            print(json.dumps({"form": form, "probed": url, "found": outcome.form}), flush=True)
        assert deps.log is not None
        await deps.log.close()
        await model.text.aclose()  # type: ignore[attr-defined]
    finally:
        await pool.close()
        await redis.aclose()
        await asyncio.to_thread(services.stop)
    return records


def totals(records: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Outcome counts per schema, over all turns of one mode."""
    per_schema: dict[str, Counter[str]] = {}
    for record in records:
        for schema, counts in record["structured"].items():
            per_schema.setdefault(schema, Counter()).update(counts)
    return per_schema


def rate(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def summarise(form: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    per_schema = totals(records)
    all_calls: Counter[str] = Counter()
    for counts in per_schema.values():
        all_calls.update(counts)
    calls = sum(all_calls[o] for o in OUTCOMES)
    failed = [r["failed"] for r in records if r["failed"]]
    return {
        "metric": "summary",
        "form": form,
        "turns": len(records),
        "turns_failed": len(failed),
        "structured_calls": calls,
        "parsed_pct": rate(all_calls["erster_versuch"] + all_calls["nach_hinweis"], calls),
        "first_attempt_pct": rate(all_calls["erster_versuch"], calls),
        "after_hint_pct": rate(all_calls["nach_hinweis"], calls),
        "unreadable_pct": rate(all_calls["unlesbar"], calls),
        "failures": sorted(set(failed))[:5],
    }


def table(results: dict[str, list[dict[str, Any]]]) -> None:
    forms = list(results)
    per_form = {form: totals(records) for form, records in results.items()}
    schemas = sorted({schema for counts in per_form.values() for schema in counts})
    header = f"{'schema':<22}" + "".join(
        f"{form + ': calls':>26}{'parsed %':>10}{'1st %':>8}{'hint %':>8}" for form in forms
    )
    print("\n" + header)
    for schema in schemas:
        line = f"{schema:<22}"
        for form in forms:
            counts = per_form[form].get(schema, Counter())
            calls = sum(counts[o] for o in OUTCOMES)
            parsed = rate(counts["erster_versuch"] + counts["nach_hinweis"], calls)
            first = rate(counts["erster_versuch"], calls)
            hint = rate(counts["nach_hinweis"], calls)
            line += f"{calls:>26}{_pct(parsed):>10}{_pct(first):>8}{_pct(hint):>8}"
        print(line)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--baseline-turns", type=int, default=3)
    parser.add_argument(
        "--budget-s",
        type=float,
        default=None,
        help="per mode: start no new turn after this many seconds (the summary says how many ran)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    from novaberg.llm.local import bundled_model_path

    work = Path(tempfile.mkdtemp(prefix="novaberg-bench-structured-"))
    server = LlamaServer(bundled_model_path(), work / "llama_server.log")
    results: dict[str, list[dict[str, Any]]] = {}
    before = cpu_times()
    started = time.perf_counter()
    try:
        server.wait_ready()
        for form, user, turns in (
            ("auto", "bench-auto", args.turns),
            ("none", "bench-none", args.baseline_turns),
        ):
            if turns > 0:
                home = work / f"home-{form}"
                results[form] = asyncio.run(
                    run_turns(home, server.url, form, user, turns, args.budget_s)
                )
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    for form, records in results.items():
        print(json.dumps(summarise(form, records), ensure_ascii=False))
    table(results)
    steal = steal_percent(before, cpu_times())
    print(
        f"\n{sum(len(r) for r in results.values())} turns in "
        f"{time.perf_counter() - started:.0f} s; load {os.getloadavg()[0]:.2f}, CPU steal "
        f"{'unknown' if steal is None else f'{steal:.1f} %'}, {os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
