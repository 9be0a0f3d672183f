"""Who writes and who reads every state channel — derived from the code, not kept by hand.

    python bench/channels.py            # the table and the count of unread channels
    python bench/channels.py --write    # put the table into docs/architecture.md
    python bench/channels.py --check    # exit 1 if the doc's table is not the code's

A channel (`graph/state.py:ConversationState`) that a node writes and nobody reads is
understanding computed and dropped; `tests/unit/test_channel_table.py` fails on one. The
answer comes from the syntax tree of `src/novaberg/`, because a grep cannot tell a state
read from any other `.get("response")`:

- **Writers.** A graph node writes the top-level keys of the dict it returns — followed
  through local variables (`update = {...}`, `update["x"] = ...`, `update.update(...)`),
  `**spreads`, helper calls whose result it returns, and module constants naming a key.
  The initial-state builders (`INITIAL_STATE`) and the node wrapper write the rest.
- **Readers.** A read is `state["x"]`, `state.get("x")` or `"x" in state` on a value that
  holds the state: a parameter named `state`/`final_state` (not an agent's `AgentState`)
  or typed `ConversationState`, the state a graph stream yields (`for node, after in
  ….stream_character(…)`), an alias of one, and — followed through calls — whatever
  parameter such a value is passed to. A node reads what its function, its route and
  every function they call read. A function outside every node's reach that reads the
  state is a reader of its own, named by module and function: the answer payload
  (`graph/runner.py`), the release rule (`graph/contract.py`), the event consumer, the
  node wrapper's pipeline_log row; and `novaberg turn` (`cli/`), the developer's window
  into a turn, marked "shown by".

The analysis is static, so a node shared by several graphs (the enricher, salience, the
dispatcher; `perception` as `perception_assistant`) is listed with every channel its
function can write, in each graph it runs in.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PACKAGE = SRC / "novaberg"
DOC = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- channels:begin (bench/channels.py --write) -->"
END = "<!-- channels:end -->"

if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

STATE_PARAMS = frozenset({"state", "final_state"})
"""Parameter names that hold a graph's state (unless typed as an agent's `AgentState`)."""

STREAMS = frozenset({"stream_character", "stream_human", "_stream"})
"""Calls whose loop yields `(node, state after it)`."""

STATE_ATTRIBUTES = frozenset({"human_state", "character_state"})
"""`TurnResult` fields holding a graph's final state (graph/runner.py)."""

INITIAL_STATE = {
    "novaberg.graph.runner:GraphRuntime.human_state": "initial state (HumanGraph)",
    "novaberg.graph.runner:GraphRuntime.character_state": "initial state (CharacterGraph)",
    "novaberg.graph.agent_graph:agent_state": "initial state (AgentGraph)",
}
"""Functions that build a graph's first state: writers of what they put in it."""

WRAPPER = "novaberg.graph.base:wrap_node"
"""The node wrapper writes `node_timings` after every node."""

AGENT_DISPATCH = "novaberg.graph.nodes.agent_dispatch:agent_dispatch"
DEFAULT_DISPATCH = "novaberg.agents.dispatch_common:default_dispatch"
"""A call the syntax tree cannot see: agent_dispatch calls the dispatch the registry found
for the agent (`registry.get_dispatch`: an agent package's `dispatch.py`, else the default)
and returns its update."""

DIAGNOSTIC_PACKAGES = ("novaberg.cli",)
"""The developer's window (`novaberg turn`): a reader, shown as "shown by" in the table."""

PENDING: dict[str, str] = {}
"""Channels still written without a reader (or read and never written), each with the issue
item that closes it. The lead shrinks this as the other parts of the issue are merged; the
test fails on an unread channel that is not here, and on an entry here that is closed."""

LEAVES_THE_GRAPH: dict[str, str] = {}
"""Channels read outside the code this tool sees, with who reads them."""

GRAPH_LETTERS = {"human": "H", "character": "C", "agent": "A"}


# --- the source ------------------------------------------------------------------------


@dataclass
class Function:
    """One `def` of the package, with what the analysis needs of it."""

    key: str  # "module:Qual.name"
    module: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: str | None  # enclosing class, for `self.method` calls
    params: list[str] = field(default_factory=list)
    state_params: set[str] = field(default_factory=set)


@dataclass
class Module:
    name: str
    tree: ast.Module
    imports: dict[str, str] = field(default_factory=dict)  # local name -> "module:name"
    constants: dict[str, ast.expr] = field(default_factory=dict)  # module-level NAME = value


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class Source:
    """Every module and function of the package, parsed once."""

    def __init__(self, root: Path = PACKAGE) -> None:
        self.modules: dict[str, Module] = {}
        self.functions: dict[str, Function] = {}
        self.by_module_name: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.methods: dict[str, list[str]] = defaultdict(list)
        self.nested: dict[str, list[str]] = defaultdict(list)  # function -> defs inside it
        for path in sorted(root.rglob("*.py")):
            name = _module_name(path)
            module = Module(name, ast.parse(path.read_text(encoding="utf-8"), str(path)))
            self.modules[name] = module
            self._index(module)

    def _index(self, module: Module) -> None:
        for stmt in module.tree.body:  # the package imports absolutely
            if isinstance(stmt, ast.ImportFrom) and stmt.module is not None and not stmt.level:
                for alias in stmt.names:
                    module.imports[alias.asname or alias.name] = f"{stmt.module}:{alias.name}"
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name) and stmt.value is not None:
                        module.constants[target.id] = stmt.value

        def visit(body: Iterable[ast.stmt], prefix: str, cls: str | None) -> None:
            for stmt in body:
                if isinstance(stmt, ast.ClassDef):
                    visit(stmt.body, f"{prefix}{stmt.name}.", stmt.name)
                elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                    key = f"{module.name}:{prefix}{stmt.name}"
                    fn = Function(key, module.name, stmt, cls)
                    args = stmt.args
                    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                    fn.params = [a.arg for a in [*args.posonlyargs, *args.args]]
                    for arg in every:
                        note = ast.unparse(arg.annotation) if arg.annotation else ""
                        if "AgentState" in note:
                            continue
                        if arg.arg in STATE_PARAMS or "ConversationState" in note:
                            fn.state_params.add(arg.arg)
                    self.functions[key] = fn
                    self.by_module_name[(module.name, stmt.name)].append(key)
                    outer = key.rpartition(".")[0]
                    if outer in self.functions:
                        self.nested[outer].append(key)
                    if cls is not None and prefix == f"{cls}.":
                        self.methods[stmt.name].append(key)
                    visit(stmt.body, f"{prefix}{stmt.name}.", cls)

        visit(module.tree.body, "", None)

    # --- name resolution ----------------------------------------------------------------

    def resolve(self, fn: Function, call: ast.expr) -> list[str]:
        """The functions a call's target may be (empty when unknown)."""
        if isinstance(call, ast.Name):
            return self._resolve_name(fn.module, call.id, fn)
        if isinstance(call, ast.Attribute):
            if isinstance(call.value, ast.Name) and call.value.id in {"self", "cls"} and fn.cls:
                key = f"{fn.module}:{fn.cls}.{call.attr}"
                return [key] if key in self.functions else []
            if isinstance(call.value, ast.Name):  # module.function
                target = self.modules[fn.module].imports.get(call.value.id)
                if target is not None:
                    module = target.replace(":", ".")
                    keys = self.by_module_name.get((module, call.attr), [])
                    return [k for k in keys if k.endswith(f":{call.attr}")]
            # obj.method: a method of that name defined on exactly one class of the package
            found = self.methods.get(call.attr, [])
            return found if len(found) == 1 else []
        return []

    def _resolve_name(self, module_name: str, name: str, fn: Function | None) -> list[str]:
        if fn is not None:  # a nested def of the enclosing function first
            nested = f"{fn.key}.{name}"
            if nested in self.functions:
                return [nested]
        local = f"{module_name}:{name}"
        if local in self.functions:
            return [local]
        target = self.modules[module_name].imports.get(name)
        if target is None:
            return []
        if target in self.functions:
            return [target]
        module, _, attr = target.partition(":")
        if module in self.modules and attr in self.modules[module].imports:
            return self._resolve_name(module, attr, None)  # a re-export
        return []

    def constant(self, module_name: str, name: str) -> ast.expr | None:
        """A module-level value by name, through imports and re-exports."""
        module = self.modules.get(module_name)
        if module is None:
            return None
        if name in module.constants:
            return module.constants[name]
        target = module.imports.get(name)
        if target is None:
            return None
        other, _, attr = target.partition(":")
        return self.constant(other, attr)


_OWN: dict[int, list[ast.AST]] = {}


def _own_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of a function's body without those of functions nested in it (walked once)."""
    found = _OWN.get(id(fn))
    if found is not None:
        return found
    found = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        found.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                stack.append(child)
    _OWN[id(fn)] = found
    return found


# --- the analysis ---------------------------------------------------------------------


class Analysis:
    def __init__(self, source: Source, channels: frozenset[str]) -> None:
        self.source = source
        self.channels = channels
        self._returns: dict[tuple[str, int | None], set[str]] = {}
        self._state_names: dict[str, set[str]] = {}
        self._may: dict[str, bool] = {}
        self.dynamic_calls = {
            AGENT_DISPATCH: {DEFAULT_DISPATCH}
            | {
                key
                for key, fn in source.functions.items()
                if fn.module.startswith("novaberg.agents.")
                and fn.module.endswith(".dispatch")
                and fn.cls is None
                and key.count(".") == fn.module.count(".")
                and not key.rpartition(":")[2].startswith("_")
            }
        }
        self._propagate()
        self.direct_reads = {key: self._reads(fn) for key, fn in source.functions.items()}
        self.calls = {key: self._callees(fn) for key, fn in source.functions.items()}

    # --- which names hold the state ---------------------------------------------------

    def state_names(self, fn: Function) -> set[str]:
        names = set(fn.state_params)
        if not names and not self._may_hold_state(fn):
            return names
        streams: set[str] = set()
        for _ in range(3):  # aliases of aliases
            for node in _own_nodes(fn.node):
                if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target, value in _pairs(targets, node.value):
                        if not isinstance(target, ast.Name):
                            continue
                        if self._holds_state(value, names):
                            names.add(target.id)
                        elif _is_stream(value):
                            streams.add(target.id)
                elif isinstance(node, ast.For | ast.AsyncFor):
                    source = node.iter
                    yields_state = _is_stream(source) or (
                        isinstance(source, ast.Name) and source.id in streams
                    )
                    if (
                        yields_state
                        and isinstance(node.target, ast.Tuple)
                        and isinstance(node.target.elts[-1], ast.Name)
                    ):
                        names.add(node.target.elts[-1].id)
        return names

    def _may_hold_state(self, fn: Function) -> bool:
        """Whether the function meets a graph's state other than through a parameter."""
        cached = self._may.get(fn.key)
        if cached is None:
            cached = any(
                _is_stream(node)
                or (isinstance(node, ast.Attribute) and node.attr in STATE_ATTRIBUTES)
                for node in _own_nodes(fn.node)
            )
            self._may[fn.key] = cached
        return cached

    def _holds_state(self, expr: ast.expr, names: set[str]) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in names
        if isinstance(expr, ast.BoolOp):
            return any(self._holds_state(v, names) for v in expr.values)
        if isinstance(expr, ast.Dict):
            return any(
                k is None and self._holds_state(v, names)
                for k, v in zip(expr.keys, expr.values, strict=True)
            )
        if isinstance(expr, ast.Call) and _call_name(expr.func) in {"dict", "cast"} and expr.args:
            return self._holds_state(expr.args[-1], names)
        return isinstance(expr, ast.Attribute) and expr.attr in STATE_ATTRIBUTES

    def _propagate(self) -> None:
        """Pass 'holds the state' on through calls until nothing changes."""
        calls = {
            key: [
                (node, self.source.resolve(fn, node.func))
                for node in _own_nodes(fn.node)
                if isinstance(node, ast.Call)
            ]
            for key, fn in self.source.functions.items()
        }
        changed = True
        while changed:
            changed = False
            self._state_names = {k: self.state_names(f) for k, f in self.source.functions.items()}
            for key in self.source.functions:
                names = self._state_names[key]
                if not names:
                    continue
                for node, targets in calls[key]:
                    for target in targets:
                        callee = self.source.functions[target]
                        params = callee.params
                        offset = 1 if params[:1] in (["self"], ["cls"]) else 0
                        for i, arg in enumerate(node.args):
                            if self._holds_state(arg, names) and i + offset < len(params):
                                changed |= _add(callee.state_params, params[i + offset])
                        for kw in node.keywords:
                            if kw.arg and self._holds_state(kw.value, names):
                                changed |= _add(callee.state_params, kw.arg)

    # --- reads --------------------------------------------------------------------------

    def _key_strings(self, fn: Function, expr: ast.expr) -> set[str]:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return {expr.value}
        if isinstance(expr, ast.Name):
            value = self.source.constant(fn.module, expr.id)
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return {value.value}
            for node in _own_nodes(fn.node):  # for key in ("a", "b"): state.get(key)
                if (
                    isinstance(node, ast.For | ast.comprehension)
                    and isinstance(node.target, ast.Name)
                    and node.target.id == expr.id
                    and isinstance(node.iter, ast.Tuple | ast.List | ast.Set)
                ):
                    return {e.value for e in node.iter.elts if isinstance(e, ast.Constant)}
        return set()

    def _reads(self, fn: Function) -> set[str]:
        names = self._state_names.get(fn.key, set())
        if not names:
            return set()
        found: set[str] = set()
        for node in _own_nodes(fn.node):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name)
                and node.value.id in names
            ):
                found |= self._key_strings(fn, node.slice)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in {"get", "pop", "setdefault"}
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in names
                and node.args
            ):
                found |= self._key_strings(fn, node.args[0])
            elif isinstance(node, ast.Compare) and len(node.ops) == 1:
                right = node.comparators[0]
                if (
                    isinstance(node.ops[0], ast.In | ast.NotIn)
                    and isinstance(right, ast.Name)
                    and right.id in names
                ):
                    found |= self._key_strings(fn, node.left)
        return found & self.channels

    def _callees(self, fn: Function) -> set[str]:
        found: set[str] = set(self.dynamic_calls.get(fn.key, ()))
        for node in _own_nodes(fn.node):
            if isinstance(node, ast.Call):
                found.update(self.source.resolve(fn, node.func))
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    if isinstance(arg, ast.Name | ast.Attribute):  # a function passed on
                        found.update(self.source.resolve(fn, arg))
        found.update(self.source.nested.get(fn.key, ()))
        return found & set(self.source.functions)

    def reach(self, roots: Iterable[str]) -> set[str]:
        seen: set[str] = set()
        stack = [r for r in roots if r in self.source.functions]
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            stack.extend(self.calls[key] - seen)
        return seen

    def reads_of(self, roots: Iterable[str]) -> set[str]:
        return set().union(*(self.direct_reads[k] for k in self.reach(roots)))

    # --- writes -------------------------------------------------------------------------

    def returned_keys(self, key: str, position: int | None = None) -> set[str]:
        """The top-level keys of the dict `key` returns (of its tuple's `position`)."""
        memo = (key, position)
        if memo in self._returns:
            return self._returns[memo]
        self._returns[memo] = set()  # a recursion returns what is known so far
        fn = self.source.functions[key]
        found: set[str] = set()
        for node in _own_nodes(fn.node):
            if isinstance(node, ast.Return) and node.value is not None:
                value = node.value
                if position is not None:
                    if not isinstance(value, ast.Tuple) or len(value.elts) <= position:
                        continue
                    value = value.elts[position]
                found |= self._dict_keys(fn, value, set())
        for callee in self.dynamic_calls.get(key, ()):
            if callee in self.source.functions:
                found |= self.returned_keys(callee)
        self._returns[memo] = found
        return found

    def _dict_keys(self, fn: Function, expr: ast.expr, seen: set[str]) -> set[str]:
        if isinstance(expr, ast.Await):
            return self._dict_keys(fn, expr.value, seen)
        if isinstance(expr, ast.Dict):
            found: set[str] = set()
            for k, v in zip(expr.keys, expr.values, strict=True):
                found |= self._dict_keys(fn, v, seen) if k is None else self._key_strings(fn, k)
            return found
        if isinstance(expr, ast.IfExp):
            return self._dict_keys(fn, expr.body, seen) | self._dict_keys(fn, expr.orelse, seen)
        if isinstance(expr, ast.BoolOp):
            return set().union(*(self._dict_keys(fn, v, seen) for v in expr.values))
        if isinstance(expr, ast.Name):
            return self._name_keys(fn, expr.id, seen)
        if isinstance(expr, ast.Call):
            name = _call_name(expr.func)
            if name == "dict":
                found = {kw.arg for kw in expr.keywords if kw.arg}
                for arg in expr.args:
                    found |= self._dict_keys(fn, arg, seen)
                for kw in expr.keywords:
                    if kw.arg is None:
                        found |= self._dict_keys(fn, kw.value, seen)
                return found
            return set().union(*(self.returned_keys(t) for t in self.source.resolve(fn, expr.func)))
        return set()

    def _name_keys(self, fn: Function, name: str, seen: set[str]) -> set[str]:
        if name in seen:
            return set()
        seen = seen | {name}
        found: set[str] = set()
        for node in _own_nodes(fn.node):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name) and target.id == name:
                        found |= self._dict_keys(fn, node.value, seen)
                    elif isinstance(target, ast.Tuple):
                        found |= self._unpacked_keys(fn, target, node.value, name, seen)
                    elif (
                        isinstance(target, ast.Subscript)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == name
                    ):
                        found |= self._key_strings(fn, target.slice)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                if node.target.id == name:
                    found |= self._dict_keys(fn, node.value, seen)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == name
            ):
                if node.func.attr == "update":
                    found |= {kw.arg for kw in node.keywords if kw.arg}
                    for arg in node.args:
                        found |= self._dict_keys(fn, arg, seen)
                elif node.func.attr == "setdefault" and node.args:
                    found |= self._key_strings(fn, node.args[0])
        if not found:
            value = self.source.constant(fn.module, name)
            if value is not None:
                found |= self._dict_keys(fn, value, seen)
        return found

    def _unpacked_keys(
        self, fn: Function, target: ast.Tuple, value: ast.expr, name: str, seen: set[str]
    ) -> set[str]:
        """Keys of `name` in `a, name = ...`: a gather's awaitable or a call's tuple item."""
        found: set[str] = set()
        gathered = _gathered(value)
        call = value.value if isinstance(value, ast.Await) else value
        for i, elt in enumerate(target.elts):
            if not (isinstance(elt, ast.Name) and elt.id == name):
                continue
            if gathered is not None and i < len(gathered):
                found |= self._dict_keys(fn, gathered[i], seen)
            elif isinstance(call, ast.Call):
                for t in self.source.resolve(fn, call.func):
                    found |= self.returned_keys(t, i)
        return found

    def writes_of(self, key: str) -> set[str]:
        return self.returned_keys(key) & self.channels


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_stream(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and _call_name(expr.func) in STREAMS


def _pairs(targets: list[ast.expr], value: ast.expr) -> Iterator[tuple[ast.expr, ast.expr]]:
    """(target, value) of an assignment, element by element for `a, b = x, y`."""
    for target in targets:
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            yield from zip(target.elts, value.elts, strict=False)
        else:
            yield target, value


def _gathered(value: ast.expr) -> list[ast.expr] | None:
    """The awaitables of `await asyncio.gather(a, b, ...)`, else None."""
    if isinstance(value, ast.Await) and isinstance(value.value, ast.Call):
        call = value.value
        if _call_name(call.func) == "gather":
            return list(call.args)
    return None


def _add(target: set[str], item: str) -> bool:
    if item in target:
        return False
    target.add(item)
    return True


# --- the graphs --------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphNode:
    graph: str
    name: str
    roots: tuple[str, ...]  # the node function, then its route


def _function_key(obj: Any) -> str:
    while hasattr(obj, "func"):  # functools.partial
        obj = obj.func
    return f"{obj.__module__}:{obj.__qualname__}"


def graph_nodes() -> list[GraphNode]:
    """Every node of the three graphs, from their declaration tables."""
    from novaberg.agents.registry import AgentRegistry
    from novaberg.graph.agent_graph import AGENT_TABLE
    from novaberg.graph.character_graph import character_table
    from novaberg.graph.human_graph import HUMAN_TABLE

    found = []
    tables = (
        ("human", HUMAN_TABLE),
        ("character", character_table(AgentRegistry())),
        ("agent", AGENT_TABLE),
    )
    for graph, table in tables:
        for node in table:
            roots = [_function_key(node.fn)]
            if node.route is not None:
                roots.append(_function_key(node.route))
            found.append(GraphNode(graph, node.name, tuple(roots)))
    return found


# --- the table ---------------------------------------------------------------------------


@dataclass
class Channel:
    name: str
    writers: set[str] = field(default_factory=set)
    readers: set[str] = field(default_factory=set)
    diagnostic_readers: set[str] = field(default_factory=set)

    @property
    def read(self) -> bool:
        return bool(self.readers or self.diagnostic_readers)


def _label(nodes: Iterable[GraphNode]) -> list[str]:
    """`router (C)`, `enricher (H C A)`: one entry per node name, its graphs in letters."""
    graphs: dict[str, set[str]] = defaultdict(set)
    for node in nodes:
        graphs[node.name].add(GRAPH_LETTERS[node.graph])
    order = "HCA"
    return [
        f"{name} ({' '.join(sorted(letters, key=order.index))})"
        for name, letters in sorted(graphs.items())
    ]


def _outside_label(source: Source, key: str) -> str:
    """`graph/runner.py:GraphRuntime.response_payload`; a nested def as its outer one."""
    while key.rpartition(".")[0] in source.functions:
        key = key.rpartition(".")[0]
    module, _, qual = key.partition(":")
    return f"`{module.removeprefix('novaberg.').replace('.', '/')}.py:{qual}`"


def channel_table() -> dict[str, Channel]:
    from novaberg.graph.state import STATE_CHANNELS

    source = Source()
    analysis = Analysis(source, STATE_CHANNELS)
    channels = {name: Channel(name) for name in sorted(STATE_CHANNELS)}
    nodes = graph_nodes()
    in_nodes: set[str] = set()
    node_writes: dict[str, list[GraphNode]] = defaultdict(list)
    node_reads: dict[str, list[GraphNode]] = defaultdict(list)
    for node in nodes:
        in_nodes |= analysis.reach(node.roots)
        for name in analysis.writes_of(node.roots[0]):
            node_writes[name].append(node)
        for name in analysis.reads_of(node.roots):
            node_reads[name].append(node)
    for name, channel in channels.items():
        channel.writers.update(_label(node_writes[name]))
        channel.readers.update(_label(node_reads[name]))
    for key, label in INITIAL_STATE.items():
        for name in analysis.writes_of(key):
            channels[name].writers.add(label)
    channels["node_timings"].writers.add("node wrapper (every node)")
    for key, reads in analysis.direct_reads.items():
        if key in in_nodes or not reads:
            continue
        label = _outside_label(source, key)
        helpers = analysis.calls[key] & in_nodes  # a node's helper it calls with the state
        for name in reads | analysis.reads_of(helpers):
            if key.startswith(DIAGNOSTIC_PACKAGES):
                channels[name].diagnostic_readers.add(label)
            else:
                channels[name].readers.add(label)
    for name, reader in LEAVES_THE_GRAPH.items():
        channels[name].readers.add(reader)
    return channels


def unread(channels: dict[str, Channel]) -> list[str]:
    """Channels something writes and nothing reads (pending ones included)."""
    return [c.name for c in channels.values() if c.writers and not c.read]


def unwritten(channels: dict[str, Channel]) -> list[str]:
    """Declared channels nothing writes."""
    return [c.name for c in channels.values() if not c.writers]


def markdown(channels: dict[str, Channel]) -> str:
    lines = [
        BEGIN,
        "",
        "| channel | written by | read by |",
        "|---|---|---|",
    ]
    for channel in channels.values():
        readers = sorted(channel.readers)
        if channel.diagnostic_readers:
            readers.append("shown by " + ", ".join(sorted(channel.diagnostic_readers)))
        if not channel.read:
            pending = PENDING.get(channel.name)
            readers.insert(0, f"**nobody** — pending: {pending}" if pending else "**nobody**")
        writers = ", ".join(sorted(channel.writers))
        if not writers:
            pending = PENDING.get(channel.name)
            writers = f"**nobody** — pending: {pending}" if pending else "**nobody**"
        lines.append(f"| `{channel.name}` | {writers} | {', '.join(readers)} |")
    count = len(unread(channels))
    lines += ["", f"Unread channels: {count}.", "", END]
    return "\n".join(lines)


def current_doc() -> str:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0:
        return ""
    return text[start : end + len(END)]


def write_doc(table: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0:
        raise SystemExit(f"{DOC}: markers {BEGIN!r} … {END!r} not found")
    DOC.write_text(text[:start] + table + text[end + len(END) :], encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="update docs/architecture.md")
    group.add_argument("--check", action="store_true", help="exit 1 if the doc is stale")
    args = parser.parse_args(argv)
    channels = channel_table()
    table = markdown(channels)
    if args.check:
        if current_doc() != table:
            print("docs/architecture.md's channel table is stale: run bench/channels.py --write")
            return 1
        return 0
    if args.write:
        write_doc(table)
    print(table)
    missing = unread(channels)
    print(f"\nunread: {len(missing)} {missing}")
    print(f"unwritten: {len(unwritten(channels))} {unwritten(channels)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
