"""Framework overhead of one full turn (HumanGraph + CharacterGraph) — information, no goal.

Runs N turns (main path: no task agent, tribunal ok) in-process with the scripted model at
zero latency against embedded Redis and PostgreSQL in a temporary home, and reports per
turn the wall time, the scripted model's own time (`CallStats.model_seconds` for chat
calls plus `embed_seconds` for the scripted embedder) and their difference — the overhead
of graphs, nodes, stores and logging. A turn with a real model takes seconds, and this
overhead (tens of milliseconds) is under 1 % of it, so it is not a target: the figures
show where a change moved the overhead, and the bench never says met or not met. They are
printed beside two floors measured in the same run, which move with the machine's load as
the overhead does: `langgraph_floor` (a LangGraph run of as many no-op nodes over the same
state, run right after each turn) and `topology_floor` (LangGraph alone running the turn's
own two graphs, every node answering at once with what it returned in the turn;
`TopologyFloor`). The process is set up as `novaberg serve`/`worker` set theirs up: graphs
compiled and the startup heap frozen before the first turn.

    .venv/bin/python bench/turn_overhead.py [--turns 50] [--warmup 3] [--human-only]

Prints one JSON line per measured quantity, then a short table. `process_cpu` (this
process's CPU time per turn) is reported too: on a shared machine the wall-clock overhead
moves with other processes' load, the CPU time much less.

What the overhead is made of (profiles in bench/README.md, "Turn overhead"): about a
quarter is LangGraph's own stepping, much of the rest is the turn's round trips to
Redis and PostgreSQL — each costs client CPU and, on a loaded machine, a wake-up of the
server process — which the floor (no-op nodes, no I/O) does not have. So the ratio
grows with the machine's load even where the code does not change; the round trips per
turn and `process_cpu` are the steadier figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _machine import cpu_times, steal_percent

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TEXTS = [
    "Wie geht's dir?",
    "Ich ziehe nächste Woche nach Köln!",
    "Heute war ein anstrengender Tag.",
    "Was hältst du von Jazz?",
    "Meine Schwester heißt Lena und wohnt in Hamburg.",
]


MAIN_PATH_RULES: list[dict[str, Any]] = [
    {
        "match": ".*",
        "schema": "RouterDecision",
        "output": {
            "needs_memory": False,
            "needs_web": False,
            "needs_timeline": False,
            "timeline_query": None,
            "momentum": "mid",
            "management_action": "",
            "management_target": "",
            "management_target_typ": "titel",
        },
    },
    {
        "match": ".*",
        "schema": "JuristVerdict",
        "output": {"score": 0.1, "direktiven_score": 0.1, "begruendung": "unbedenklich"},
    },
    {"match": ".*", "schema": "PsychologistVerdict", "output": {"score": 0.1}},
    {"match": ".*", "schema": "EthicistVerdict", "output": {"score": 0.1}},
]
"""Keep every turn on the main path (no task agent, tribunal ok); every other call gets the
scripted model's schema-valid default answer."""


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def _bench(home: Path, turns: int, warmup: int, human_only: bool) -> dict[str, Any]:
    from novaberg.agents.registry import agent_migrations, discover_agents
    from novaberg.config import load_settings
    from novaberg.graph.contract import GraphDeps
    from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
    from novaberg.llm.accounting import track_calls
    from novaberg.llm.layer import ModelLayer
    from novaberg.llm.scripted import Rule, ScriptedEmbedder, ScriptedLLM
    from novaberg.pair import Pair
    from novaberg.runtime.heap import freeze_startup_heap
    from novaberg.runtime.services import EmbeddedServices
    from novaberg.store.postgres import create_pool
    from novaberg.store.redis_client import create_redis

    settings = load_settings(home=home, llm="scripted", embed="scripted", pixie=False)
    services = EmbeddedServices(settings, extra_migrations=agent_migrations())
    endpoints = await asyncio.to_thread(services.start)
    redis = create_redis(endpoints.redis_url)
    pool = await create_pool(endpoints.database_url)
    try:
        rules = [Rule.from_dict(rule) for rule in MAIN_PATH_RULES]
        scripted = ScriptedLLM(rules, latency_ms=0.0)
        model = ModelLayer(scripted, ScriptedEmbedder(settings.embed_dim))
        deps = GraphDeps(settings, redis, pool, model)
        topology = TopologyFloor()
        with topology.recording():
            runtime = GraphRuntime(deps, discover_agents()).compile()
        freeze_startup_heap()  # as the server and worker processes do once built
        pair = Pair("bench", settings.character)
        totals: list[float] = []
        models: list[float] = []
        human: list[float] = []
        character: list[float] = []
        calls: list[int] = []
        cpu: list[float] = []
        steps: list[int] = []
        floor_runs = Floor()
        floor: list[float] = []
        topology_floor: list[float | None] = []
        for index in range(warmup + turns):
            text = TEXTS[index % len(TEXTS)]
            with track_calls() as stats:
                started = time.perf_counter()
                cpu_started = time.process_time()
                result = await run_turn_inprocess(
                    runtime, pair, text, with_character=not human_only
                )
                elapsed = (time.perf_counter() - started) * 1000
                cpu_ms = (time.process_time() - cpu_started) * 1000
            if result.event_payload.get("pfad1_ausfall"):
                raise RuntimeError(f"path 1 failed: {result.event_payload['pfad1_ausfall']}")
            if index < warmup:
                continue
            totals.append(elapsed)
            models.append((stats.model_seconds + stats.embed_seconds) * 1000)
            human.append(result.human_ms)
            character.append(result.character_ms)
            calls.append(stats.calls)
            cpu.append(cpu_ms)
            steps.append(len(result.stages))
            # the floors right after the turn, so all see the same machine load
            floor.append(await floor_runs.measure(len(result.stages)))
            topology_floor.append(await topology.measure(runtime, pair, text, result, human_only))
        assert deps.log is not None
        await deps.log.close()
    finally:
        await pool.close()
        await redis.aclose()
        await asyncio.to_thread(services.stop)

    overhead = [t - m for t, m in zip(totals, models, strict=True)]
    return {
        "turns": turns,
        "graphs": "human" if human_only else "human+character",
        "total_ms": totals,
        "model_ms": models,
        "overhead_ms": overhead,
        "human_ms": human,
        "character_ms": character,
        "model_calls": calls,
        "process_cpu_ms": cpu,
        "steps": steps,
        "langgraph_floor_ms": floor,
        "topology_floor_ms": topology_floor,
    }


class Floor:
    """The framework's own floor: a LangGraph of no-op nodes in a line over the same
    ConversationState, as many as the turn ran nodes (one graph per length, built once)."""

    def __init__(self) -> None:
        self.graphs: dict[int, Any] = {}

    def graph(self, steps: int) -> Any:
        if steps not in self.graphs:
            from langgraph.graph import END, START, StateGraph

            from novaberg.graph.state import ConversationState

            builder = StateGraph(ConversationState)
            previous = START
            for index in range(steps):

                async def node(state: Any, index: int = index) -> dict[str, Any]:
                    return {"node_timings": {f"n{index}": 0.0}}

                builder.add_node(f"n{index}", node)
                builder.add_edge(previous, f"n{index}")
                previous = f"n{index}"
            builder.add_edge(previous, END)
            self.graphs[steps] = builder.compile()
        return self.graphs[steps]

    async def measure(self, steps: int) -> float:
        """Wall time of one run of `steps` no-op nodes."""
        from novaberg.graph.personality import InternalPersonality, Personality

        graph = self.graph(steps)
        state = {"external": Personality(), "internal": InternalPersonality(), "node_timings": {}}
        started = time.perf_counter()
        async for _chunk in graph.astream(state, stream_mode="updates"):
            pass
        return (time.perf_counter() - started) * 1000


class TopologyFloor:
    """LangGraph alone on the turn's own graphs: a second floor beside the line floor.

    The line floor (`Floor`) runs one graph of no-op nodes in a row. A turn runs two graphs
    (HumanGraph, then the CharacterGraph), with fan-outs, barriers, routed nodes and
    several channels written per node, and LangGraph's own cost depends on all of that.
    This floor compiles both graphs as the turn does, with every node wrapped once more:
    during a turn the node runs and its return value is kept; `measure` then runs both
    compiled graphs with every node handing back what it returned in the turn just
    measured, at once — the same path, the same state updates, no node work and none of
    our node wrapper (which stays overhead)."""

    def __init__(self) -> None:
        self.returned: dict[tuple[str, str], Any] = {}
        self.replaying = False

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Graphs compiled inside this block keep (and can replay) their nodes' returns."""
        from novaberg.graph import base

        wrap = base.wrap_node

        def keeping(name: str, fn: Any, deps: Any, graph: str, route: Any = None) -> Any:
            live = wrap(name, fn, deps, graph, route)
            key = (graph, name)

            async def node(state: Any) -> Any:
                if self.replaying:
                    return self.returned[key]
                result = await live(state)
                self.returned[key] = result
                return result

            return node

        base.wrap_node = keeping
        try:
            yield
        finally:
            base.wrap_node = wrap

    async def measure(
        self, runtime: Any, pair: Any, text: str, result: Any, human_only: bool
    ) -> float | None:
        """Wall time of both graphs replaying `result`'s turn; None (logged) when the replay
        did not run the turn's nodes — then it measured some other path."""
        from novaberg.graph.contract import CharacterTurn, HumanTurn
        from novaberg.wire import SOURCE_USER

        human = runtime.human_state(
            HumanTurn(pair, result.turn_id, text, ["floor"], runtime.deps.clock())
        )
        graphs = [(runtime.human_graph, human)]
        if not human_only:
            turn = CharacterTurn(pair, result.turn_id, SOURCE_USER, result.event_payload)
            graphs.append((runtime.character_graph, runtime.character_state(turn)))
        ran: list[str] = []
        self.replaying = True
        try:
            started = time.perf_counter()
            for graph, state in graphs:
                async for chunk in graph.astream(state, stream_mode="updates"):
                    ran.extend(name for name in chunk if not name.startswith("__"))
            elapsed = (time.perf_counter() - started) * 1000
        finally:
            self.replaying = False
        if sorted(ran) != sorted(node for _graph, node, _ms in result.stages):
            print(f"topology floor: the replay ran {ran}, not the turn's nodes", file=sys.stderr)
            return None
        return elapsed


def _summary(name: str, values: list[float]) -> dict[str, Any]:
    return {
        "metric": name,
        "median_ms": round(statistics.median(values), 3),
        "p95_ms": round(_percentile(values, 0.95), 3),
        "min_ms": round(min(values), 3),
        "max_ms": round(max(values), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--human-only", action="store_true", help="run the HumanGraph only")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="novaberg-bench-"))
    before = cpu_times()
    try:
        data = asyncio.run(_bench(home, args.turns, args.warmup, args.human_only))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    steal = steal_percent(before, cpu_times())

    rows = [
        _summary("turn_total", data["total_ms"]),
        _summary("model_time", data["model_ms"]),
        _summary("overhead", data["overhead_ms"]),
        _summary("human_graph", data["human_ms"]),
        _summary("character_graph", data["character_ms"]),
        _summary("process_cpu", data["process_cpu_ms"]),
        _summary("langgraph_floor", data["langgraph_floor_ms"]),
    ]
    topology = [ms for ms in data["topology_floor_ms"] if ms is not None]
    if len(topology) == len(data["topology_floor_ms"]):
        rows.append(_summary("topology_floor", topology))
    for row in rows:
        row.update(turns=data["turns"], graphs=data["graphs"])
        print(json.dumps(row))
    overhead_median = rows[2]["median_ms"]
    floor_median = rows[6]["median_ms"]
    topology_median = rows[7]["median_ms"] if len(rows) > 7 else None
    verdict = {
        "metric": "summary",
        "overhead_median_ms": overhead_median,
        "model_calls_per_turn": statistics.median(data["model_calls"]),
        "nodes_per_turn": statistics.median(data["steps"]),
        # three decimals: small changes between runs stay visible
        "overhead_to_langgraph_floor": round(overhead_median / floor_median, 3),
        # None: a replay missed the turn's path (`TopologyFloor`)
        "overhead_to_topology_floor": (
            round(overhead_median / topology_median, 3) if topology_median else None
        ),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpu_steal_pct": steal,
        "cpus": os.cpu_count(),
    }
    print(json.dumps(verdict))

    print(f"\n{'metric':<16}{'median ms':>11}{'p95 ms':>10}")
    for row in rows:
        print(f"{row['metric']:<16}{row['median_ms']:>11.2f}{row['p95_ms']:>10.2f}")
    print(
        f"(process_cpu: this process's CPU time per turn; Redis/PostgreSQL run elsewhere. "
        f"langgraph_floor: {verdict['nodes_per_turn']} no-op nodes over the same state, "
        f"same run. Load average {verdict['load_average_1m']} on {verdict['cpus']} CPUs; CPU "
        f"steal during the run {'unknown' if steal is None else f'{steal:.1f} %'}: the "
        f"hypervisor running other machines on these cores, which slows every figure.)"
    )
    ratio = verdict["overhead_to_topology_floor"]
    print(
        f"overhead median {overhead_median:.2f} ms ({data['graphs']}, {data['turns']} turns); "
        f"/ langgraph_floor = {verdict['overhead_to_langgraph_floor']:.3f}, "
        f"/ topology_floor = {'NOT MEASURED' if ratio is None else f'{ratio:.3f}'} "
        "(information, not a goal: compare runs of the same machine, alternating)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
