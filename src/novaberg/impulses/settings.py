"""What a person decided about Nova's impulses (`impuls_einstellungen`), per user and
character (docs/behaviour/pixie.md#settings).

A missing row or column means the default: impulses on, quiet hours from
`NOVABERG_QUIET_HOURS`, 3 a day, the zone `NOVABERG_TIMEZONE`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time
from typing import Any, Final
from zoneinfo import ZoneInfo

from psycopg_pool import AsyncConnectionPool

DEFAULT_PER_DAY: Final = 3
QUIET_PATTERN: Final = re.compile(r"^(?:([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d))?$")
"""`HH:MM-HH:MM` or empty (no quiet hours)."""


def parse_quiet_hours(text: str) -> tuple[time, time] | None:
    """(start, end) of the quiet hours, None for none; ValueError for anything else."""
    match = QUIET_PATTERN.match(text.strip())
    if match is None:
        raise ValueError(f"quiet hours {text!r}: expected HH:MM-HH:MM or empty")
    if not match.group(1):
        return None
    h1, m1, h2, m2 = (int(g) for g in match.groups())
    return time(h1, m1), time(h2, m2)


def in_quiet_hours(quiet: tuple[time, time] | None, local: datetime) -> bool:
    """True inside [start, end), across midnight when start > end; equal = none."""
    if quiet is None:
        return False
    start, end = quiet
    now = local.time().replace(second=0, microsecond=0, tzinfo=None)
    if start == end:
        return False
    if start < end:
        return start <= now < end
    return now >= start or now < end


@dataclass(frozen=True)
class ImpulseSettings:
    enabled: bool
    quiet_hours: str
    timezone: str
    per_day: int

    def wire(self) -> dict[str, Any]:
        return {
            "impulse": self.enabled,
            "ruhezeit": self.quiet_hours,
            "zeitzone": self.timezone,
            "pro_tag": self.per_day,
        }

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


async def read(
    pool: AsyncConnectionPool,
    user_id: str,
    character_id: str,
    *,
    default_quiet: str,
    default_zone: str,
) -> ImpulseSettings:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT impulse, ruhezeit, zeitzone, pro_tag FROM impuls_einstellungen"
            " WHERE user_id = %s AND character_id = %s",
            (user_id, character_id),
        )
        row = await cur.fetchone()
    found = dict(row) if row is not None else {}
    enabled, quiet, zone, per_day = (
        found.get(k) for k in ("impulse", "ruhezeit", "zeitzone", "pro_tag")
    )
    return ImpulseSettings(
        enabled=True if enabled is None else bool(enabled),
        quiet_hours=default_quiet if quiet is None else str(quiet),
        timezone=default_zone if zone is None else str(zone),
        per_day=DEFAULT_PER_DAY if per_day is None else int(per_day),
    )


async def update(
    pool: AsyncConnectionPool, user_id: str, character_id: str, changes: dict[str, Any]
) -> None:
    """Store the given columns (impulse, ruhezeit, zeitzone, pro_tag); others keep theirs."""
    allowed = {"impulse", "ruhezeit", "zeitzone", "pro_tag"}
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(f"unknown settings {sorted(unknown)}")
    if not changes:
        return
    columns = sorted(changes)
    names = ", ".join(columns)
    values = ", ".join(["%s"] * len(columns))
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns)
    async with pool.connection() as conn:
        await conn.execute(
            f"INSERT INTO impuls_einstellungen (user_id, character_id, {names}) VALUES"
            f" (%s, %s, {values}) ON CONFLICT (user_id, character_id) DO UPDATE SET"
            f" {updates}, geaendert_am = now()",
            (user_id, character_id, *(changes[c] for c in columns)),
        )
