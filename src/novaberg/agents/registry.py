"""`AgentRegistry` and `discover_agents`: one folder per agent, nothing else to edit.

Why an instance and not a class-level dict (docs/behaviour/agents.md#registry): tests build
their own registries side by side, and a process may run several graphs.
A new agent is a new folder under `agents/` with `AGENT.md` (required),
`agent.py` (a `BaseAgent` subclass), optionally `dispatch.py` (`dispatch` or
`dispatch_<folder>`; without it `dispatch_common.default_dispatch` runs the agent) and
optionally `schema.sql` (applied by the migration runner as
`agent_<folder>_schema.sql`).
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from novaberg.agents.base import AgentDefinitionError, BaseAgent
from novaberg.agents.dispatch_common import default_dispatch
from novaberg.store.migrate import Migration

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

log = logging.getLogger(__name__)

__all__ = ["AgentRegistry", "DispatchFn", "agent_migrations", "discover_agents"]

DispatchFn = Callable[[dict[str, Any], "GraphDeps", BaseAgent], Awaitable[dict[str, Any]]]
"""`async def dispatch(state, deps, agent) -> state update`."""

AGENTS_PACKAGE = "novaberg.agents"


class AgentRegistry:
    """Registered agents by wire name, with their dispatch functions."""

    def __init__(self) -> None:
        self._agents: dict[str, BaseAgent] = {}
        self._dispatch: dict[str, DispatchFn] = {}

    def register(self, agent: BaseAgent, dispatch: DispatchFn | None = None) -> None:
        _ = agent.description  # AGENT.md is required; raises if missing
        self._agents[agent.name] = agent
        if dispatch is not None:
            self._dispatch[agent.name] = dispatch

    def find(self, name: str | None) -> BaseAgent | None:
        return self._agents.get(name or "")

    def all(self) -> dict[str, BaseAgent]:
        return dict(self._agents)

    def for_graph(self, graph: str) -> dict[str, BaseAgent]:
        return {n: a for n, a in self._agents.items() if graph in a.graph_suitability}

    def get_dispatch(self, name: str | None) -> DispatchFn | None:
        return self._dispatch.get(name or "")

    def descriptions(self, graph: str | None = None) -> str:
        """The router's `[AGENTEN]` notices: one "- name: notice" line per routable agent."""
        agents = self.for_graph(graph) if graph else self._agents
        return "\n".join(
            f"- {name}: {agent.notice}" for name, agent in sorted(agents.items()) if agent.routable
        )

    def offerable(self, graph: str) -> dict[str, str]:
        """The agents of `graph` Nova may offer to run, with their offer notices, by name."""
        return {
            name: agent.offer_notice
            for name, agent in sorted(self.for_graph(graph).items())
            if agent.offer_notice
        }

    def match_target(self, target: str | None) -> str | None:
        """The planner's target rule: exact name (or alias); else the single substring match
        in either direction; two or more substring matches or an empty target → None."""
        wanted = (target or "").strip().lower()
        if not wanted:
            return None
        names = {name: {name.lower(), *agent.aliases} for name, agent in self._agents.items()}
        for name, spellings in names.items():
            if wanted in spellings:
                return name
        hits = {
            name
            for name, spellings in names.items()
            if any(wanted in s or s in wanted for s in spellings)
        }
        return next(iter(hits)) if len(hits) == 1 else None

    def __len__(self) -> int:
        return len(self._agents)


def _agent_dirs(package: str) -> list[Path]:
    root = Path(importlib.import_module(package).__file__ or "").parent
    return sorted(
        p
        for p in root.iterdir()
        if p.is_dir() and not p.name.startswith(("_", ".")) and (p / "agent.py").is_file()
    )


def _agent_classes(module: ModuleType) -> list[type[BaseAgent]]:
    return [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, BaseAgent)
        and not inspect.isabstract(obj)
        and obj.__module__ == module.__name__
    ]


def _dispatch_of(package: str, folder: Path) -> DispatchFn | None:
    """The folder's `dispatch.py` function (`dispatch_<folder>` or `dispatch`), or
    `default_dispatch` when the folder has no `dispatch.py`."""
    if not (folder / "dispatch.py").is_file():
        return default_dispatch
    module = importlib.import_module(f"{package}.{folder.name}.dispatch")
    found: DispatchFn | None = getattr(module, f"dispatch_{folder.name}", None) or getattr(
        module, "dispatch", None
    )
    return found


def discover_agents(
    registry: AgentRegistry | None = None, *, package: str = AGENTS_PACKAGE, graph: str = "user"
) -> AgentRegistry:
    """Register every agent folder of `package` suitable for `graph`.

    A folder without AGENT.md, or whose modules fail to import, is refused and
    logged; the others still load.
    """
    registry = registry if registry is not None else AgentRegistry()
    for folder in _agent_dirs(package):
        if not (folder / "AGENT.md").is_file():
            log.error("agent folder %s refused: AGENT.md is missing", folder.name)
            continue
        try:
            agent_module = importlib.import_module(f"{package}.{folder.name}.agent")
            dispatch = _dispatch_of(package, folder)
        except Exception:
            log.exception("agent folder %s refused: import failed", folder.name)
            continue
        for cls in _agent_classes(agent_module):
            try:
                agent = cls()
                if graph not in agent.graph_suitability:
                    continue
                registry.register(agent, dispatch)
            except AgentDefinitionError:
                log.exception("agent %s refused", cls.__name__)
    return registry


def agent_migrations(package: str = AGENTS_PACKAGE) -> list[Migration]:
    """Each agent folder's `schema.sql` as a migration named `agent_<folder>_schema.sql`."""
    return [
        Migration(f"agent_{folder.name}_schema.sql", (folder / "schema.sql").read_text())
        for folder in _agent_dirs(package)
        if (folder / "schema.sql").is_file()
    ]
