"""How long a turn takes with the bundled model: what a `make serve` user waits for.

Runs N full turns (HumanGraph + CharacterGraph) in-process with the product's own model
setup (SmolLM2 through llama.cpp and MiniLM embeddings in one process) against embedded
Redis and PostgreSQL in a temporary home. Per turn: wall time, the time until the answer
is released (`perception_assistant`), model time, model calls, prompt and completion
tokens; per node the median time.

Baseline, measured in the same run: the raw speed of the same GGUF with the same threads
and context in a separate process that has no torch loaded — prompt evaluation and
generation in tokens/s — and from it the model time the turns' tokens would need at that
speed. `slowdown` = measured model time / that time (the model time of the tribunal's
concurrent judges includes their wait for the one model thread). Grammar-constrained
JSON and that wait make it somewhat above 1; far above 1 means something in the product process slows the model
down (it once did: torch's thread pool next to llama.cpp's cut generation from ~70 to
~18 tokens/s).

    .venv/bin/python bench/local_model.py [--turns 5] [--profile full|compact|both]

Profiles (docs/behaviour/llm.md#profiles): `both` (the default) runs N turns in each, one
model load, each profile with its own conversation; the turns alternate (full, compact,
full, …) so a change of the machine's load falls on both alike. Prints one JSON line per
turn and per profile a summary line and a node table, then per profile the answer time
(median over its N turns), turn done, model calls and tokens. Takes about a minute per
turn on two cores; on a loaded machine raise NOVABERG_LLM_TIMEOUT (a call past it fails
its turn, which is counted as failed and left out of the figures).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from _machine import cpu_times, steal_percent

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TEXTS = [
    "Wie geht's dir?",
    "Ich ziehe nächste Woche nach Köln!",
    "Heute war ein anstrengender Tag.",
    "Meine Schwester heißt Lena und wohnt in Hamburg.",
]

RAW_PROMPT = (
    "Anna erzählt von ihrem Umzug nach Köln, von der neuen Wohnung in Ehrenfeld, "
    "vom Rhein und von ihrer Schwester Lena, die in Hamburg wohnt. "
)
RAW_PROMPT_REPEAT = 12
"""~400 prompt tokens, about a typical call's prompt."""

RAW_GENERATE_TOKENS = 128

log = logging.getLogger("bench.local_model")


def raw_speed() -> dict[str, float]:
    """Prompt evaluation and generation speed of the bundled GGUF, without torch."""
    from llama_cpp import Llama

    from novaberg.config import load_settings
    from novaberg.llm.local import bundled_model_path

    settings = load_settings(home=Path(tempfile.gettempdir()) / "novaberg-raw-speed")
    model = Llama(
        model_path=str(bundled_model_path()),
        n_ctx=settings.local_context,
        n_threads=settings.local_threads,
        verbose=False,
    )
    tokens = model.tokenize((RAW_PROMPT * RAW_PROMPT_REPEAT).encode())
    model.eval(tokens[:32])  # first-use costs out of the measurement
    model.reset()
    started = time.perf_counter()
    model.eval(tokens)
    prompt_seconds = time.perf_counter() - started

    model.reset()
    first: float | None = None
    generated = 0
    for chunk in model.create_completion(
        "Eine lange Geschichte über Köln:",
        max_tokens=RAW_GENERATE_TOKENS,
        stream=True,
        temperature=0.7,
        seed=1,
        logit_bias={model.token_eos(): -100.0},  # generate the full count
    ):
        if chunk["choices"][0].get("text"):
            generated += 1
            if first is None:
                first = time.perf_counter()
    ended = time.perf_counter()
    model.close()
    if first is None or generated < 2:
        raise RuntimeError(f"raw generation produced {generated} tokens")
    return {
        "prompt_tokens_per_s": round(len(tokens) / prompt_seconds, 1),
        "generation_tokens_per_s": round((generated - 1) / (ended - first), 1),
        "prompt_tokens": len(tokens),
        "generated_tokens": generated,
    }


def measure_raw_speed() -> dict[str, float] | None:
    """`raw_speed` in a fresh process (no torch there); None, logged, if it failed."""
    done = subprocess.run(
        [sys.executable, __file__, "--raw"], capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        log.error("raw speed measurement failed: %s", done.stderr.strip()[-2000:])
        return None
    try:
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        log.error("raw speed measurement printed no result: %r", done.stdout[-500:])
        return None


class ReleaseClock:
    """Seconds from the turn's start until the CharacterGraph's release node ran."""

    def __init__(self, started: float, release_node: str) -> None:
        self.started = started
        self.release_node = release_node
        self.seconds: float | None = None

    def on_stage(self, graph: str, node: str, state: dict[str, Any], ms: float) -> None:
        from novaberg.graph.contract import release_ready

        if graph == "character" and self.seconds is None and release_ready(state):
            self.seconds = time.perf_counter() - self.started


async def run_turns(home: Path, turns: int, profiles: list[str]) -> dict[str, list[dict[str, Any]]]:
    from novaberg.agents.registry import agent_migrations, discover_agents
    from novaberg.config import Profile, load_settings
    from novaberg.graph.contract import RELEASE_NODE, GraphDeps
    from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
    from novaberg.llm.accounting import track_calls
    from novaberg.llm.errors import ModelError
    from novaberg.llm.factory import build_model_layer
    from novaberg.pair import Pair
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.postgres import create_pool
    from novaberg.store.redis_client import create_redis

    settings = load_settings(home=home, pixie=False)
    services = EmbeddedServices(settings, extra_migrations=agent_migrations())
    endpoints = await asyncio.to_thread(services.start)
    redis = create_redis(endpoints.redis_url)
    pool = await create_pool(endpoints.database_url)
    records: dict[str, list[dict[str, Any]]] = {profile: [] for profile in profiles}
    failed = dict.fromkeys(profiles, 0)
    try:
        model = build_model_layer(settings)
        for part in (model.text, model.embedder):  # loading is not part of a turn
            await part.warm_up()  # type: ignore[attr-defined]
        runs = {}
        for profile in profiles:
            profiled = settings.model_copy(update={"profile": Profile(profile)})
            deps = GraphDeps(profiled, redis, pool, model)
            runtime = GraphRuntime(deps, discover_agents()).compile()
            runs[profile] = (deps, runtime, Pair(f"bench-{profile}", settings.character))
        for index, profile in ((i, p) for i in range(turns) for p in profiles):
            deps, runtime, pair = runs[profile]
            started = time.perf_counter()
            clock = ReleaseClock(started, RELEASE_NODE)
            try:
                with track_calls() as stats:
                    result = await run_turn_inprocess(
                        runtime, pair, TEXTS[index % len(TEXTS)], clock.on_stage
                    )
            except ModelError as exc:  # a loaded machine: one call past NOVABERG_LLM_TIMEOUT
                log.error("%s: turn %d failed: %s", profile, index + 1, exc)
                failed[profile] += 1
                continue
            released = clock.seconds
            record = {
                "turn": index + 1,
                "profile": profile,
                "wall_s": round(time.perf_counter() - started, 2),
                "answer_after_s": round(released, 2) if released is not None else None,
                "model_s": round(stats.model_seconds, 2),
                "model_calls": stats.calls,
                "prompt_tokens": stats.prompt_tokens,
                "completion_tokens": stats.completion_tokens,
                "nodes_s": {f"{g}:{n}": round(ms / 1000, 2) for g, n, ms in result.stages},
                "answer": str((result.response or {}).get("nachricht") or "")[:200],
            }
            if released is None:
                log.error("%s: turn %d released no answer", profile, index + 1)
            records[profile].append(record)
            print(json.dumps(record, ensure_ascii=False), flush=True)
        for profile, count in failed.items():
            if count:
                print(json.dumps({"metric": "failed_turns", "profile": profile, "turns": count}))
        for deps, _, _ in runs.values():
            assert deps.log is not None
            await deps.log.close()
    finally:
        await pool.close()
        await redis.aclose()
        await asyncio.to_thread(services.stop)
    return records


def expected_model_seconds(record: dict[str, Any], raw: dict[str, float] | None) -> float | None:
    if raw is None:
        return None
    return record["prompt_tokens"] / raw["prompt_tokens_per_s"] + (
        record["completion_tokens"] / raw["generation_tokens_per_s"]
    )


def report(
    profile: str,
    records: list[dict[str, Any]],
    raw: dict[str, float] | None,
    steal: float | None,
) -> dict[str, Any]:
    def median(key: str) -> float | None:
        values = [r[key] for r in records if r[key] is not None]
        return round(statistics.median(values), 2) if values else None

    expected = [expected_model_seconds(r, raw) for r in records]
    slowdowns = [
        r["model_s"] / e for r, e in zip(records, expected, strict=True) if e is not None and e > 0
    ]
    summary = {
        "metric": "summary",
        "profile": profile,
        "turns": len(records),
        "model_calls_median": median("model_calls"),
        "wall_s_median": median("wall_s"),
        "answer_after_s_median": median("answer_after_s"),
        "model_s_median": median("model_s"),
        "prompt_tokens_median": median("prompt_tokens"),
        "completion_tokens_median": median("completion_tokens"),
        "raw": raw,
        "model_s_at_raw_speed_median": (
            round(statistics.median([e for e in expected if e is not None]), 2)
            if raw is not None
            else None
        ),
        "slowdown_median": round(statistics.median(slowdowns), 2) if slowdowns else None,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpu_steal_pct": steal,
        "cpus": os.cpu_count(),
    }
    print(json.dumps(summary))

    nodes: dict[str, list[float]] = defaultdict(list)
    for record in records:
        for node, seconds in record["nodes_s"].items():
            nodes[node].append(seconds)
    print(f"\n{profile}: {'node':<34}{'median s':>10}")
    for node, values in nodes.items():
        print(f"{node:<34}{statistics.median(values):>10.2f}")
    print(
        f"\n{profile}: turn {summary['wall_s_median']} s, answer after {summary['answer_after_s_median']} s,"
        f" model {summary['model_s_median']} s for {summary['prompt_tokens_median']} prompt +"
        f" {summary['completion_tokens_median']} completion tokens (medians, "
        f"{len(records)} turns; CPU steal during them "
        f"{'unknown' if steal is None else f'{steal:.1f} %'})"
    )
    if raw is None:
        print("raw llama.cpp speed: NOT measured (see the error above)")
    else:
        print(
            f"raw llama.cpp speed, same GGUF and threads, no torch in the process: "
            f"{raw['prompt_tokens_per_s']} prompt tokens/s, "
            f"{raw['generation_tokens_per_s']} generated tokens/s -> the turn's tokens would "
            f"take {summary['model_s_at_raw_speed_median']} s; slowdown "
            f"{summary['slowdown_median']} (JSON grammar: somewhat above 1)"
        )
    return summary


def answer_line(summary: dict[str, Any]) -> str:
    """The per-profile figure the README quotes."""
    return (
        f"{summary['profile']}: answer after {summary['answer_after_s_median']} s "
        f"(median of {summary['turns']} turns), turn done {summary['wall_s_median']} s, "
        f"{summary['model_calls_median']} model calls, {summary['prompt_tokens_median']} "
        f"prompt + {summary['completion_tokens_median']} completion tokens"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--profile", choices=("full", "compact", "both"), default="both")
    parser.add_argument("--raw", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.raw:
        print(json.dumps(raw_speed()))
        return 0
    raw = measure_raw_speed()
    home = Path(tempfile.mkdtemp(prefix="novaberg-bench-"))
    before = cpu_times()
    try:
        profiles = ["full", "compact"] if args.profile == "both" else [args.profile]
        records = asyncio.run(run_turns(home, args.turns, profiles))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    steal = steal_percent(before, cpu_times())
    summaries = [report(profile, rows, raw, steal) for profile, rows in records.items()]
    print()
    for summary in summaries:
        print(answer_line(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
