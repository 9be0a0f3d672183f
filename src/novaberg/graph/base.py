"""The node wrapper every node of every graph runs in (docs/behaviour/graphs.md#node-wrapper).

A node is a plain coroutine::

    async def some_node(state: ConversationState, deps: GraphDeps) -> dict[str, Any]

(extra arguments are bound with `functools.partial`). `wrap_node` turns it into the
one-argument callable LangGraph wants and, around every run:

- opens a `track_calls()` scope named `graph/node`, so the row knows how many model calls
  the node made (and a recorder, which node made a call: `novaberg turn --prompts`);
- times the run and adds `node_timings: {name: ms}` to the update;
- checks that every returned key is a declared channel (`STATE_CHANNELS`) and raises
  `UndeclaredChannelError` naming the key — LangGraph would silently drop it;
- records one `pipeline_log` row (art "node", ergebnis "ok" | "fehler"), with how its
  structured calls ended (`strukturiert`);
- on an exception records an "fehler" row and re-raises.

**Reserved return key `_log`** (`LOG_KEY`): a node may return `"_log": {...}`, a small
JSON-ready summary of what it did (e.g. `{"ausfall": "perception_unlesbar"}`). The wrapper
pops it from the update and stores it as the row's `inhalt`; it never reaches the state.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from novaberg.agents.deps import GraphDeps
from novaberg.graph.state import STATE_CHANNELS, ConversationState
from novaberg.llm.accounting import CallStats, track_calls
from novaberg.memory.run_log import record_node_run
from novaberg.wire import GRAPH_NAMES

LOG_KEY: Final = "_log"
"""Reserved return key: the node's summary for its pipeline_log row (popped, not state)."""

TIMINGS_KEY: Final = "node_timings"


NodeFn = Callable[[ConversationState, GraphDeps], Awaitable[dict[str, Any] | None]]
WrappedNode = Callable[[ConversationState], Awaitable[dict[str, Any] | Command[str]]]
Route = Callable[[ConversationState], str]
"""Picks the next node from the state after a node's update (its routing channels are
plain last-value channels, so `{**state, **update}` is that state)."""


class UndeclaredChannelError(KeyError):
    """A node returned a key that is not a declared ConversationState channel."""

    def __init__(self, node: str, keys: list[str]) -> None:
        self.node = node
        self.keys = keys
        super().__init__(
            f"node {node!r} returned undeclared state channel(s) {keys}; "
            "declare them in graph/state.py (LangGraph would drop them silently)"
        )

    def __str__(self) -> str:
        return str(self.args[0])


def check_channels(node: str, update: dict[str, Any]) -> None:
    """Raise `UndeclaredChannelError` if `update` holds a key that is not a channel (one set
    operation on the common path: every node run is checked)."""
    if STATE_CHANNELS.issuperset(update):
        return
    undeclared = [key for key in update if key not in STATE_CHANNELS]
    raise UndeclaredChannelError(node, sorted(undeclared))


def wrap_node(
    name: str, fn: NodeFn, deps: GraphDeps, graph: str, route: Route | None = None
) -> WrappedNode:
    """The LangGraph node callable for `fn` (see the module docstring for what it adds).

    With `route`, the node names its successor itself: it returns
    `Command(update=..., goto=route(state after the update))`. A conditional edge would
    give the same path, but LangGraph evaluates one on a fresh copy of every channel,
    which costs more than most nodes do."""
    if graph not in GRAPH_NAMES:
        raise ValueError(f"graph must be one of {sorted(GRAPH_NAMES)}, not {graph!r}")
    pipeline_log = deps.log
    if pipeline_log is None:  # GraphDeps.__post_init__ always sets one
        raise ValueError("GraphDeps.log is None; construct GraphDeps normally")
    label = f"{graph}/{name}"  # whose model calls these are (llm/recording.py)

    def record(
        state: ConversationState,
        elapsed_ms: float,
        stats: CallStats,
        *,
        ok: bool,
        summary: dict[str, Any],
    ) -> None:
        record_node_run(
            pipeline_log,
            graph=graph,
            node=name,
            turn_id=state.get("turn_id"),
            user_id=state.get("user_id"),
            character_id=state.get("character_id"),
            elapsed_ms=elapsed_ms,
            calls=stats.calls,
            ok=ok,
            summary=summary,
            structured=stats.structured_summary() if stats.structured else None,
        )

    async def run(state: ConversationState) -> dict[str, Any] | Command[str]:
        started = time.perf_counter()
        summary: dict[str, Any] = {}
        with track_calls(label) as stats:
            try:
                result = await fn(state, deps)
                if result is None:
                    result = {}
                if not isinstance(result, dict):
                    raise TypeError(f"node {name!r} returned {type(result).__name__}, not dict")
                update = dict(result)
                raw_summary = update.pop(LOG_KEY, None)
                if raw_summary is not None:
                    summary = dict(raw_summary)
                check_channels(name, update)
            except BaseException as exc:
                elapsed = (time.perf_counter() - started) * 1000
                content = dict(summary)
                content["fehler"] = f"{type(exc).__name__}: {exc}"[:2000]
                record(state, elapsed, stats, ok=False, summary=content)
                raise
        elapsed = round((time.perf_counter() - started) * 1000, 3)
        if stats.total_tokens:
            summary.setdefault("tokens", stats.total_tokens)
        record(state, elapsed, stats, ok=True, summary=summary)
        update[TIMINGS_KEY] = {name: elapsed}
        if route is None:
            return update
        return Command(update=update, goto=route(cast(ConversationState, {**state, **update})))

    run.__name__ = f"node_{name}"
    run.__qualname__ = run.__name__
    return run


@dataclass(frozen=True)
class Node:
    """One row of a graph's declaration: a node and where the run goes after it.

    Either `then` or `route` with the `routes` it can name — never both. The first row is
    the entry node; a row with `entry=True` starts at the same time (a second branch from
    the start, for work that needs nothing the first node computes).

    - `then="x"`: a plain edge (`END` ends the run); `then=("a", "b")` **fans out**: a and
      b run concurrently in the next step (LangGraph runs every node a step triggers at
      once). Branches that are one node long and lead to the same node meet there in one
      step, so that node runs once.
    - `barrier=True` makes the node wait for **all** rows whose `then` names it (a
      LangGraph barrier edge `add_edge([a, b], c)`): it runs once, after the last of them,
      while other branches go on. Only plain edges may lead to a barrier node — a routed
      node passes a barrier even when it routes elsewhere.
    - `defer=True` makes the node the **join** for branches of different or routed length:
      LangGraph holds a deferred node back until no other node is left to run, then runs it
      once, however many branches led to it.
    """

    name: str
    fn: NodeFn
    then: str | tuple[str, ...] | None = None
    route: Route | None = None
    routes: tuple[str, ...] = ()
    defer: bool = False
    barrier: bool = False
    entry: bool = False

    def successors(self) -> tuple[str, ...]:
        if self.route is not None:
            return self.routes
        if isinstance(self.then, tuple):
            return self.then
        return (self.then or END,)


def node_names(table: Sequence[Node]) -> tuple[str, ...]:
    """The table's node names in declaration order (the stage names clients see)."""
    return tuple(node.name for node in table)


def linear(steps: Sequence[tuple[str, NodeFn]]) -> tuple[Node, ...]:
    """The table of a graph that runs `steps` in order, then ends."""
    names = [name for name, _ in steps]
    return tuple(
        Node(name, fn, then=names[i + 1] if i + 1 < len(names) else END)
        for i, (name, fn) in enumerate(steps)
    )


def compile_graph(
    table: Sequence[Node],
    deps: GraphDeps,
    graph: str,
    *,
    roles: Mapping[str, str] | None = None,
) -> Any:
    """The compiled LangGraph for a declaration table.

    With `roles`, every node reads the state with these role flags laid over it, so a
    shared node picks the graph's variant even for a state built without the runtime."""
    names = set(node_names(table))
    if len(names) != len(table):
        raise ValueError(f"{graph}: a node name is declared twice")
    barriers: dict[str, list[str]] = {node.name: [] for node in table if node.barrier}
    for node in table:
        for successor in node.successors():
            if successor in barriers:
                if node.route is not None:
                    raise ValueError(
                        f"{graph}: routed node {node.name!r} cannot lead to barrier {successor!r}"
                    )
                barriers[successor].append(node.name)
    builder = StateGraph(ConversationState)
    for node in table:
        if (node.then is None) == (node.route is None):
            raise ValueError(f"{graph}: node {node.name!r} needs exactly one of then/route")
        unknown = [n for n in node.successors() if n != END and n not in names]
        if unknown:
            raise ValueError(f"{graph}: node {node.name!r} leads to undeclared {unknown}")
        fn = node.fn if roles is None else _with_roles(node.fn, roles)
        wrapped: Any = wrap_node(node.name, fn, deps, graph, node.route)
        builder.add_node(node.name, wrapped, destinations=node.routes or None, defer=node.defer)
        if node.then is not None:
            for successor in node.successors():
                if successor not in barriers:
                    builder.add_edge(node.name, successor)
    for name, sources in barriers.items():
        if not sources:
            raise ValueError(f"{graph}: no plain edge leads to barrier node {name!r}")
        builder.add_edge(sources if len(sources) > 1 else sources[0], name)
    for node in table:
        if node is table[0] or node.entry:
            builder.add_edge(START, node.name)
    return builder.compile()


def _with_roles(fn: NodeFn, roles: Mapping[str, str]) -> NodeFn:
    flags = dict(roles)

    async def run(state: ConversationState, deps: GraphDeps) -> dict[str, Any] | None:
        return await fn({**state, **flags}, deps)  # type: ignore[typeddict-item]

    run.__name__ = getattr(fn, "__name__", "node")
    return run
