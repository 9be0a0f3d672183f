from __future__ import annotations

from typing import Any

from novaberg.agents.dispatch_common import run_dispatch


async def dispatch_echo(state: dict[str, Any], deps: Any, agent: Any) -> dict[str, Any]:
    update, _result, _final = await run_dispatch(state, deps, agent)
    return update
