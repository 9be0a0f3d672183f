"""Counting Redis commands by name (`INFO commandstats` deltas), apart from the bench's own.

A bench that counts "Redis commands per turn" from `total_commands_processed` also counts
its own `INFO` and the `SCAN` it waits with; counting per command name drops those and
shows which commands the count is made of (polling is `SMEMBERS` of the active pairs plus
a script per member, the turns' own work uses these names too: `split_polling`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

BENCH_COMMANDS = frozenset({"info", "scan", "dbsize", "flushall", "ping"})
"""Commands only the bench itself sends while it measures (workers and the API use none)."""


def snapshot(client: Any) -> Counter[str]:
    """Calls per command name so far (a sync redis-py client)."""
    stats: dict[str, Any] = client.info("commandstats")
    calls: Counter[str] = Counter()
    for name, fields in stats.items():
        command = name.removeprefix("cmdstat_").lower()
        calls[command] = int(fields["calls"]) if isinstance(fields, dict) else 0
    return calls


def delta(before: Counter[str], after: Counter[str]) -> Counter[str]:
    """Calls made between two snapshots, without the bench's own commands."""
    spent: Counter[str] = Counter()
    for command, count in after.items():
        if command in BENCH_COMMANDS:
            continue
        made = count - before.get(command, 0)
        if made > 0:
            spent[command] = made
    return spent


def split_polling(turn_calls: Counter[str], idle_calls: Counter[str]) -> tuple[float, float]:
    """(polling, own work) of a turn phase, in commands: at most this much polling.

    `idle_calls` were counted over a window with the same workers and active pairs and
    nothing to start: every command there is polling or housekeeping, and a turn phase
    holds some number `a` of such windows' worth of it on top of the turns' own work. The
    turns use the same command names too (`SMEMBERS` in the short-term memory scripts,
    `LLEN`, `EVALSHA`), so `a` is not known exactly; it is at most the smallest ratio
    turn_calls[n] / idle_calls[n] over the names of the window (more would leave a
    negative own count for that name). That bound is taken: polling at most, own work at
    least — exact when one command of the polling is one the turns never send."""
    total = float(sum(turn_calls.values()))
    names = [name for name, count in idle_calls.items() if count > 0]
    if not names:
        return 0.0, total
    windows = min(turn_calls.get(name, 0) / idle_calls[name] for name in names)
    polling = min(total, windows * sum(idle_calls.values()))
    return polling, total - polling
