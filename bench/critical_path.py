"""Sequential model rounds before the answer is released, and model calls per turn.

Every model call takes the same latency L (the scripted model with one delay-only rule in
front, `{"match": ".", "latency_ms": L}`; embeddings take no latency). A turn's *rounds*
are the time from the start of the HumanGraph to the node after which the answer leaves
(`contract.release_ready`), divided by L: how many model calls the user waits for one after
the other. Baseline in the same run: every measured turn is paired with the same turn at
L = 0 (the graphs' own time, no model wait); `model_rounds` = (t_L − t_0) / L counts the
model rounds alone, `rounds` = t_L / L includes the graphs' own time. Turns run in-process as the workers run them (`run_turn_inprocess`: the
CharacterGraph starts when the HumanGraph hands the turn on, the HumanGraph's tail runs
on). Plain messages on the main path: no task agent, the tribunal approves.

Goal (issue 16): median ≤ 5.0 sequential model rounds (`model_rounds`) with every node
in; `rounds` is printed next to it. L defaults to 1 s, the order of a local model's call:
the graphs' own time (tens of milliseconds, `turn_overhead.py`) then adds a few hundredths
of a round to `rounds`.

The critical path of a plain message (the nodes the answer waits for, in order; the same
as docs/architecture.md's graph, where it is marked):

- R1 `perception` ‖ `situation_reader` (HumanGraph): the CharacterGraph needs the
  perceived utterance in the session; the situation's call needs nothing perception
  computes and rides along in the event. Then `session_turn` stores it (no model) and the event leaves; salience
  (segmentation, scoring), condensing and the session summary run off the path.
- `db_access` → `ei_calc` (no model): Nova's state and emotion, which the enricher reads.
- `situation_node` (no model: it writes Path 1's reading forward), next to `ei_calc`.
- R2, concurrently: `router` (what to do; after the situation, whose acute objects it
  reads as `[LAGE]`) and the enricher's query rewrite, which also awaits Path 1's
  salience (one call, running since the hand-over); then `emotional_gravitation` →
  `reducer` and the appointment reading (no model).
- R3 `composer` (what to say: it needs memory, routing and the situation) ‖ the call of
  `conversation_vector` (the conversation's hypothesis), in the same step.
- R4 `responder` (how to say it: it needs the composer's content and the hypothesis).
  `thinker` makes no call on a plain message (no fact indicators).
- R5 `tribunal` (three judges at once) ‖ `perception_assistant` on the same text;
  `evaluate` accepts → released.
- After the release (nobody waits): ei_calc_persist → salience ‖ uptake → imprint →
  dispatcher.

Several tasks in one message (`--tasks N`, docs/behaviour/agents.md#several-tasks-in-one-message):
the planner runs the agents one after the other, each waiting for the one before, so every
agent run adds its own rounds to the path — one for its classification in the usual case
(a timeline entry; a note whose list and items the classifier named: no draft call). The
graph's shape gives the bound: R1, R2 as above, then one round per task, then the
conversation vector's call (the composer makes none on a task report: the context cut), the
responder and the tribunal — 5 + N rounds for N tasks, i.e. a multi-task turn adds at most
one round per extra agent over a single-agent turn. Measured with `--tasks 1` and
`--tasks 2` (alternately a new note with its item and an appointment "übermorgen", the
router naming every task, no word the thinker takes for a fact — "Termin", "um", a weekday
would add its check to any appointment turn, one task or several): medians 6.01 and 6.97
model rounds (5 turns each, L = 1 s; plain messages 4.98 in the same session) — the second
agent cost 0.96 rounds.

A latency rule's wait ends on its deadline (`llm/scripted.wait_exactly`): a plain
`asyncio.sleep` wakes up to a millisecond late (epoll's resolution), which counted once a
round put the median a hundredth above five rounds that are exactly five.

    .venv/bin/python bench/critical_path.py [--turns 7] [--latency-ms 1000] [--tasks N]
                                            [--profile full|compact]

`--profile` builds the graphs for that profile (docs/behaviour/llm.md#profiles; default
full, the seed's every node). The compact profile keeps the rounds — its tribunal is one
call where the full one makes three concurrent ones, its query rewrite (concurrent with the
router) is off — but makes fewer calls: on a model that serves one call at a time (the
bundled one) those are what the person waits for (`model_calls_per_turn`,
bench/local_model.py).

Prints one JSON line per turn, then the median with the goal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from turn_overhead import MAIN_PATH_RULES, TEXTS

GOAL_ROUNDS = 5.0
"""Issue 16: ≤ 5.0 sequential model rounds before release, with every node in."""


def goal_rounds(tasks: int) -> float:
    """The plain message's goal, plus at most one round per agent task."""
    return GOAL_ROUNDS + tasks


def task_rules(text_index: int, tasks: int) -> tuple[str, list[dict[str, Any]]]:
    """A message with `tasks` tasks (a note with one item, an appointment, alternately) and
    the rules of a perfect decision: the router names each task, each classifier its own."""
    named: list[dict[str, str]] = []
    rules: list[dict[str, Any]] = []
    for k in range(tasks):
        tag = f"{text_index}x{k}"
        if k % 2 == 0:
            part, target, schema = f"setz Punkt{tag} auf die Liste{tag}", "notizen", "Notes"
            output: dict[str, Any] = {"target": f"Liste{tag}", "elemente": [f"Punkt{tag}"]}
        else:
            part, target, schema = (
                f"erinnere mich übermorgen an Meeting{tag}",
                "timeline",
                "Timeline",
            )
            output = {"target": f"Meeting{tag}", "zeitausdruck": "übermorgen"}
        named.append({"target": target, "text": part})
        rules.append(
            {
                "match": f"Äußerung des Nutzers: {part}\n",
                "schema": f"{schema}Classification",
                "output": {"action": "create", **output},
            }
        )
    text = " und ".join(task["text"] for task in named)
    router = {"management_action": "agent", "momentum": "mid", "management_tasks": named}
    rules.append(
        {"match": rf"\[AKTUELLER PROMPT\]\n{text}", "schema": "RouterDecision", "output": router}
    )
    return text, rules


class ReleaseClock:
    """When the answer left: the first CharacterGraph node after which `release_ready`
    holds (or, for a graph without that rule, the release node itself)."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.seconds: float | None = None
        self.node: str | None = None

    def on_stage(self, graph: str, node: str, state: dict[str, Any], ms: float) -> None:
        if graph != "character" or self.seconds is not None:
            return
        if _released(node, state):
            self.seconds = time.perf_counter() - self.started
            self.node = node


def _released(node: str, state: dict[str, Any]) -> bool:
    from novaberg.graph import contract

    ready = getattr(contract, "release_ready", None)
    if ready is not None:
        return bool(ready(state))
    return node == contract.RELEASE_NODE  # before the concurrent topology


async def _bench(
    home: Path, turns: int, warmup: int, latency_ms: float, tasks: int = 0, profile: str = "full"
) -> list[dict[str, Any]]:
    from novaberg.agents.registry import agent_migrations, discover_agents
    from novaberg.config import load_settings
    from novaberg.graph.contract import GraphDeps
    from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
    from novaberg.llm.accounting import track_calls
    from novaberg.llm.layer import ModelLayer
    from novaberg.llm.scripted import Rule, ScriptedEmbedder, ScriptedLLM
    from novaberg.pair import Pair
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.postgres import create_pool
    from novaberg.store.redis_client import create_redis

    settings = load_settings(
        home=home, llm="scripted", embed="scripted", pixie=False, profile=profile
    )
    services = EmbeddedServices(settings, extra_migrations=agent_migrations())
    endpoints = await asyncio.to_thread(services.start)
    redis = create_redis(endpoints.redis_url)
    pool = await create_pool(endpoints.database_url)
    records: list[dict[str, Any]] = []
    try:
        delay = Rule.from_dict({"match": ".", "latency_ms": latency_ms})
        rules = [delay, *(Rule.from_dict(rule) for rule in MAIN_PATH_RULES)]
        scripted = ScriptedLLM(rules)
        model = ModelLayer(scripted, ScriptedEmbedder(settings.embed_dim))
        deps = GraphDeps(settings, redis, pool, model)
        runtime = GraphRuntime(deps, discover_agents()).compile()

        async def turn(pair: Any, text: str, latency: float) -> tuple[Any, ReleaseClock, Any]:
            delay.latency_ms = latency
            clock = ReleaseClock(time.perf_counter())
            with track_calls() as stats:
                result = await run_turn_inprocess(runtime, pair, text, clock.on_stage)
            if result.event_payload.get("pfad1_ausfall"):
                raise RuntimeError(f"path 1 failed: {result.event_payload['pfad1_ausfall']}")
            return result, clock, stats

        for index in range(warmup + turns):
            text = TEXTS[index % len(TEXTS)]
            if tasks:
                text, turn_rules = task_rules(index, tasks)
                # behind the delay rule, so these calls wait L too
                scripted.rules[1:1] = [Rule.from_dict(rule) for rule in turn_rules]
            # the same turn without model latency (its own pair, the same history length)
            _, base, _ = await turn(Pair("bench0", settings.character), text, 0.0)
            started = time.perf_counter()
            _, clock, stats = await turn(Pair("bench", settings.character), text, latency_ms)
            if index < warmup:
                continue
            released, floor = clock.seconds, base.seconds
            record = {
                "turn": index - warmup + 1,
                "rounds": None if released is None else round(released * 1000 / latency_ms, 2),
                "model_rounds": None
                if released is None or floor is None
                else round((released - floor) * 1000 / latency_ms, 2),
                "released_after_ms": None if released is None else round(released * 1000, 1),
                "released_at_l0_ms": None if floor is None else round(floor * 1000, 1),
                "released_at": clock.node,
                "model_calls": stats.calls,
                "tasks": tasks,
                "profile": profile,
                "wall_ms": round((time.perf_counter() - started) * 1000, 1),
            }
            records.append(record)
            print(json.dumps(record), flush=True)
        assert deps.log is not None
        await deps.log.close()
    finally:
        await pool.close()
        await redis.aclose()
        await asyncio.to_thread(services.stop)
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--latency-ms", type=float, default=1000.0)
    parser.add_argument(
        "--tasks", type=int, default=0, help="agent tasks per message (0: plain messages)"
    )
    parser.add_argument(
        "--profile", choices=("full", "compact"), default="full", help="the graphs' profile"
    )
    args = parser.parse_args()
    if args.turns < 5:
        parser.error("--turns must be ≥ 5 (the figure is a median over ≥ 5 turns)")

    home = Path(tempfile.mkdtemp(prefix="novaberg-critical-"))
    try:
        records = asyncio.run(
            _bench(home, args.turns, args.warmup, args.latency_ms, args.tasks, args.profile)
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
    rounds = [r["rounds"] for r in records if r["rounds"] is not None]
    net = [r["model_rounds"] for r in records if r["model_rounds"] is not None]
    missing = len(records) - len(net)
    complete = bool(net) and not missing
    median_net = round(statistics.median(net), 2) if complete else None
    median_raw = round(statistics.median(rounds), 2) if complete else None
    goal = goal_rounds(args.tasks)
    verdict = {
        "metric": "critical_path",
        "tasks": args.tasks,
        "profile": args.profile,
        "model_rounds_median": median_net,
        "rounds_median": median_raw,
        "goal_model_rounds": goal,
        "met": median_net is not None and median_net <= goal,
        "model_calls_per_turn": statistics.median(r["model_calls"] for r in records),
        "latency_ms": args.latency_ms,
        "turns": len(records),
        "turns_without_release": missing,
    }
    print(json.dumps(verdict))
    if median_net is None:
        shown = "none (a turn released no answer)"
    else:
        shown = f"{median_net:.2f} (with the graphs' own time {median_raw:.2f})"
    print(
        f"{args.profile}: sequential model rounds before release: median {shown} vs goal "
        f"{goal:.1f} — {'met' if verdict['met'] else 'NOT met'}; model calls per turn "
        f"{verdict['model_calls_per_turn']} (L = {args.latency_ms:.0f} ms, {len(records)} "
        f"turns, each paired with the same turn at L = 0)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
