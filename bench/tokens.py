"""Tokens per turn, per node, and how much of a turn's prompts a prefix cache can reuse.

Runs N plain turns (main path: no task agent, tribunal ok — `turn_overhead.MAIN_PATH_RULES`)
in-process with the scripted model against embedded Redis and PostgreSQL in a temporary
home. Every raw completion is recorded below `structured` (`_token_count.RecordingBackend`:
the node that made it, the exact messages, the answer) and counted with the bundled
model's own chat template and tokenizer (`_token_count.ChatTokenizer`, the GGUF loaded
vocabulary-only): the prompt's tokens as llama.cpp evaluates them, the answer's tokens.

- Per turn: calls, prompt and completion tokens, and the **shared prefix**: for each call,
  the tokens its prompt begins with that an earlier call of the same turn already began
  with (the longest such run) — what llama.cpp's or vLLM's prefix cache can skip at best.
- The same against the call just before only (`with_call_before`): what a cache of one
  state gets — llama-cpp-python keeps the last prompt's KV state and skips what the next
  prompt shares with it; the difference to the shared prefix is what a cache of several
  states (its `LlamaRAMCache`, a server's prefix cache) adds.
- The same with the turn before's prompts cached as well (`with_previous_turn`, counted
  from the second turn): what a server cache that keeps several prompts can reuse of a
  node's stable head from one turn to the next.
- Per node: calls, prompt, completion and shared tokens per turn (means over the turns).
- The longest prompt blocks: a template's `[BLOCK]` (or a system message) by its mean
  tokens per turn, summed over the calls that carry it.
- Completions are the scripted model's (a rule's output or its schema-valid default):
  they show what a node's schema lets an answer be, not what a real model writes —
  `local_model.py` counts a real model's answers.

Baseline in the same run: `--baseline-ref REF` checks REF out into a temporary
`git worktree` and runs this very script against that checkout's `src/` in a subprocess
(same counting, same turns), then prints both; without it the figures recorded for main
before the prompt reordering are in bench/README.md.

    .venv/bin/python bench/tokens.py [--turns 5] [--show N] [--baseline-ref main]

Prints one JSON line per turn, a JSON summary, the tables, and as the last line
`tokens: P prompt + C completion per turn, S % shared prefix`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from _token_count import (
    ChatTokenizer,
    RecordedCompletion,
    RecordingBackend,
    common_prefix,
    shared_prefixes,
)
from turn_overhead import MAIN_PATH_RULES, TEXTS

BENCH_DIR = Path(__file__).resolve().parent

STEADY_RULES: list[dict[str, Any]] = [
    {
        "match": ".*",
        "schema": "PerceptionResult",
        "output": {
            "rational": {"intent": "personal", "tone": "empathisch", "thema": "Alltag"},
            "emotional": {"emotion": "freude", "arousal": 0.5},
            "psychologisch": {
                "modus": "alltag",
                "sprach_stil": "locker",
                "beziehungs_dynamik": "vertrauen",
            },
        },
    },
    {
        "match": ".*",
        "schema": "SalienceScore",
        "output": {
            "salienz": 0.6,
            "themen": ["Alltag"],
            "emotionen": {"explizit": ["freude"], "implizit": [], "valenz": "positiv"},
            "gedaechtnistyp": "kurz",
            "dimension": "kontext",
            "intentionen": ["information_teilen"],
            "entitaeten_roh": [],
            "zeitausdruck_roh": "",
            "begruendung": "Persönliches aus dem Alltag.",
        },
    },
]
"""One reading of every utterance and answer, so a turn takes the same path in every run
and in the baseline: the schema-valid defaults hash the prompt, and a changed prompt could
change the path (a `meta` intent skips the conversation vector, the salience decides the
short-term writes) — a change of figures no prompt edit made."""
_HEADER = re.compile(r"^\[([A-Z0-9ÄÖÜ_ \-]+)\]\s*$", re.MULTILINE)


def prompt_blocks(messages: tuple[dict[str, str], ...]) -> list[tuple[str, str]]:
    """(block name, text) of every message: a `[BLOCK]` of a template, the text before the
    first header as "(preamble)", a system message whole as "(system)"."""
    blocks: list[tuple[str, str]] = []
    for message in messages:
        content = message.get("content", "")
        if message.get("role") == "system":
            blocks.append(("(system)", content))
            continue
        headers = list(_HEADER.finditer(content))
        head = content[: headers[0].start()] if headers else content
        if head.strip():
            blocks.append((f"({message.get('role', '?')})", head))
        for index, header in enumerate(headers):
            end = headers[index + 1].start() if index + 1 < len(headers) else len(content)
            blocks.append((header.group(1), content[header.start() : end]))
    return blocks


def measure_turn(
    tokenizer: ChatTokenizer,
    calls: list[RecordedCompletion],
    previous: list[list[int]] | None = None,
) -> dict[str, Any]:
    """Per call: prompt, completion and shared-prefix tokens; and the turn's sums. With the
    turn before's prompts (`previous`) also `with_previous_turn`: the shared prefix when a
    cache still holds that turn's prompts as well (a server's cache keeps many)."""
    prompts = [tokenizer.prompt_tokens(call.messages) for call in calls]
    shared = shared_prefixes(prompts)
    before = previous or []
    across = shared_prefixes([*before, *prompts])[len(before) :]
    last = [0, *(common_prefix(a, b) for a, b in itertools.pairwise(prompts))]
    rows = []
    for call, tokens, common in zip(calls, prompts, shared, strict=True):
        rows.append(
            {
                "node": call.source or "(outside a node)",
                "schema": call.schema,
                "prompt": len(tokens),
                "completion": tokenizer.count(call.text),
                "shared": common,
                "blocks": [
                    (call.source, name, tokenizer.count(text))
                    for name, text in prompt_blocks(call.messages)
                ],
            }
        )
    return {
        "calls": rows,
        "prompts": prompts,
        "prompt_tokens": sum(r["prompt"] for r in rows),
        "completion_tokens": sum(r["completion"] for r in rows),
        "shared_prefix_tokens": sum(r["shared"] for r in rows),
        "with_previous_turn_tokens": sum(across),
        "with_call_before_tokens": sum(last),
    }


async def _run(home: Path, turns: int) -> list[list[RecordedCompletion]]:
    from novaberg.agents.registry import agent_migrations, discover_agents
    from novaberg.config import load_settings
    from novaberg.graph.contract import GraphDeps
    from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
    from novaberg.llm.layer import ModelLayer
    from novaberg.llm.scripted import Rule, ScriptedEmbedder, ScriptedLLM
    from novaberg.pair import Pair
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.postgres import create_pool
    from novaberg.store.redis_client import create_redis

    settings = load_settings(home=home, llm="scripted", embed="scripted", pixie=False)
    services = EmbeddedServices(settings, extra_migrations=agent_migrations())
    endpoints = await asyncio.to_thread(services.start)
    redis = create_redis(endpoints.redis_url)
    pool = await create_pool(endpoints.database_url)
    per_turn: list[list[RecordedCompletion]] = []
    try:
        rules = [Rule.from_dict(rule) for rule in (*STEADY_RULES, *MAIN_PATH_RULES)]
        backend = RecordingBackend(ScriptedLLM(rules, latency_ms=0.0))
        model = ModelLayer(backend, ScriptedEmbedder(settings.embed_dim))
        deps = GraphDeps(settings, redis, pool, model)
        runtime = GraphRuntime(deps, discover_agents()).compile()
        pair = Pair("bench", settings.character)
        for index in range(turns):
            backend.completions = []
            result = await run_turn_inprocess(runtime, pair, TEXTS[index % len(TEXTS)])
            if result.event_payload.get("pfad1_ausfall"):
                raise RuntimeError(f"path 1 failed: {result.event_payload['pfad1_ausfall']}")
            per_turn.append(backend.completions)
        assert deps.log is not None
        await deps.log.close()
    finally:
        await pool.close()
        await redis.aclose()
        await asyncio.to_thread(services.stop)
    return per_turn


def summarize(measured: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(measured)
    prompt = sum(t["prompt_tokens"] for t in measured) / n
    completion = sum(t["completion_tokens"] for t in measured) / n
    shared = sum(t["shared_prefix_tokens"] for t in measured) / n
    later = measured[1:] or measured
    across = sum(t["with_previous_turn_tokens"] for t in later)
    across_pct = round(100 * across / sum(t["prompt_tokens"] for t in later), 1)
    nodes: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    blocks: dict[tuple[str, str], float] = defaultdict(float)
    for turn in measured:
        for row in turn["calls"]:
            node = nodes[row["node"]]
            node["calls"] += 1 / n
            for key in ("prompt", "completion", "shared"):
                node[key] += row[key] / n
            for source, name, count in row["blocks"]:
                blocks[(source, name)] += count / n
    return {
        "metric": "tokens",
        "turns": n,
        "calls_per_turn": round(sum(len(t["calls"]) for t in measured) / n, 1),
        "prompt_per_turn": round(prompt),
        "completion_per_turn": round(completion),
        "shared_prefix_per_turn": round(shared),
        "shared_prefix_pct": round(100 * shared / prompt, 1) if prompt else 0.0,
        "with_previous_turn_pct": across_pct,
        "with_call_before_pct": round(
            100 * sum(t["with_call_before_tokens"] for t in measured) / (prompt * n), 1
        )
        if prompt
        else 0.0,
        "nodes": {name: {k: round(v, 1) for k, v in row.items()} for name, row in nodes.items()},
        "blocks": sorted(
            ({"node": s, "block": b, "tokens": round(c)} for (s, b), c in blocks.items()),
            key=lambda row: -row["tokens"],
        )[:12],
    }


def measure(turns: int, show: int) -> dict[str, Any]:
    from novaberg.llm.local import bundled_model_path

    tokenizer = ChatTokenizer(bundled_model_path())
    home = Path(tempfile.mkdtemp(prefix="novaberg-tokens-"))
    try:
        recorded = asyncio.run(_run(home, turns))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    measured: list[dict[str, Any]] = []
    for index, calls in enumerate(recorded, start=1):
        if index <= show:
            _show(index, calls)
        turn = measure_turn(tokenizer, calls, measured[-1]["prompts"] if measured else None)
        measured.append(turn)
        line = {k: v for k, v in turn.items() if k not in ("calls", "prompts")}
        print(json.dumps({"turn": index, "calls": len(calls), **line}), flush=True)
    return summarize(measured)


def _show(index: int, calls: list[RecordedCompletion]) -> None:
    for number, call in enumerate(calls, start=1):
        print(f"── turn {index} call {number}: {call.source} [{call.schema}]", file=sys.stderr)
        for message in call.messages:
            print(f"<{message.get('role')}>\n{message.get('content')}", file=sys.stderr)
        print(f"<answer>\n{call.text}", file=sys.stderr)


def baseline(ref: str, turns: int) -> dict[str, Any] | None:
    """This script's summary over `ref`'s checkout (its `src/`), or None if it failed."""
    repo = BENCH_DIR.parent
    checkout = Path(tempfile.mkdtemp(prefix="novaberg-tokens-ref-")) / "tree"
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "--detach", "--quiet", str(checkout), ref],
        check=True,
    )
    try:
        env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
        run = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--turns", str(turns), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            print(run.stderr[-2000:], file=sys.stderr)
            return None
        summary: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
        return summary
    finally:
        subprocess.run(
            ["git", "-C", str(repo), "worktree", "remove", "--force", str(checkout)], check=False
        )
        shutil.rmtree(checkout.parent, ignore_errors=True)


def _table(summary: dict[str, Any], base: dict[str, Any] | None) -> None:
    print(f"\n{'node':<38}{'calls':>6}{'prompt':>8}{'compl.':>8}{'shared':>8}")
    for name, row in sorted(summary["nodes"].items(), key=lambda kv: -kv[1]["prompt"]):
        print(
            f"{name:<38}{row['calls']:>6.1f}{row['prompt']:>8.0f}"
            f"{row['completion']:>8.0f}{row['shared']:>8.0f}"
        )
    print(f"\n{'longest prompt blocks (tokens per turn)':<52}{'tokens':>8}")
    for row in summary["blocks"]:
        print(f"{row['node'] + ' [' + row['block'] + ']':<52}{row['tokens']:>8}")
    if base is not None:
        print(
            f"\nbaseline {base['ref']}: {base['prompt_per_turn']} prompt + "
            f"{base['completion_per_turn']} completion per turn, "
            f"{base['shared_prefix_pct']} % shared prefix "
            f"({base.get('with_call_before_pct', '-')} % with the call before only, "
            f"{base.get('with_previous_turn_pct', '-')} % with the turn before), "
            f"{base['calls_per_turn']} calls"
        )
    print(
        f"shared prefix with the call just before only (one cached state, as the "
        f"in-process model keeps it): {summary['with_call_before_pct']} %; with the turn "
        f"before's prompts cached too: {summary['with_previous_turn_pct']} % (turns 2 on)"
    )


def last_line(summary: dict[str, Any]) -> str:
    """The line the issue asks for, always printed last."""
    return (
        f"tokens: {summary['prompt_per_turn']} prompt + {summary['completion_per_turn']} "
        f"completion per turn, {summary['shared_prefix_pct']} % shared prefix"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--show", type=int, default=0, help="print the first N turns' prompts")
    parser.add_argument("--baseline-ref", help="also measure this git ref (a temp worktree)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.turns < 1:
        parser.error("--turns must be ≥ 1")
    base = None
    if args.baseline_ref:
        base = baseline(args.baseline_ref, args.turns)
        if base is not None:
            base["ref"] = args.baseline_ref
    summary = measure(args.turns, args.show)
    summary["baseline"] = base
    print(json.dumps(summary), flush=True)
    if args.json:
        return 0
    _table(summary, base)
    if args.baseline_ref and base is None:
        print(f"\nbaseline {args.baseline_ref}: failed")
    print(last_line(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
