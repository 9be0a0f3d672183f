"""What the machine gave a benchmark run: CPU steal, read from /proc/stat.

On a shared virtual machine the hypervisor sometimes runs other guests on "our" cores.
That time is *steal*: it neither shows in the load average nor in a process's CPU time,
but every wall-clock figure measured meanwhile gets slower. The benchmarks print it next
to their figures, so a slow run can be told apart from slow code.
"""

from __future__ import annotations

from pathlib import Path

PROC_STAT = Path("/proc/stat")
STEAL_COLUMN = 7
"""Position of `steal` among the numbers of the `cpu` line (after user, nice, system, idle,
iowait, irq, softirq); guest time after it is already counted in user."""


def cpu_times() -> tuple[int, ...] | None:
    """The aggregate `cpu` line of /proc/stat in clock ticks; None where there is none."""
    try:
        first = PROC_STAT.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if first[0] != "cpu" or len(first) <= STEAL_COLUMN + 1:
        return None
    return tuple(int(value) for value in first[1 : STEAL_COLUMN + 2])


def steal_percent(before: tuple[int, ...] | None, after: tuple[int, ...] | None) -> float | None:
    """Share of all CPU time between two snapshots that went to other guests; None if it
    cannot be known (no /proc/stat, or no time passed)."""
    if before is None or after is None:
        return None
    spent = [later - earlier for earlier, later in zip(before, after, strict=True)]
    total = sum(spent)
    return round(100 * spent[STEAL_COLUMN] / total, 1) if total > 0 else None
