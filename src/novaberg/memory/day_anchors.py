"""Day anchors (docs/behaviour/memory.md#day-anchors): the raw time expression a salience
score names (`zeitausdruck_roh`, "am Dienstag") becomes the day it is about, and that day's
`erinnerungs_anker` timeline row — found or created — is the short-term entry's
`timeline_id`. Promotion carries it into the long-term node, so "was war am Dienstag?"
finds both layers' memories of that Tuesday (memory/day_recall.py).

Which way a bare weekday points ("am Dienstag") is read from the statement's tense: a past
form ("war", "hatte", "habe … gemacht") means the last one, anything else the coming one —
"Am Dienstag war ich beim Arzt" and "Am Dienstag habe ich eine Prüfung" (present tense for
the future, as German speaks). Direction words and day words ("letzten", "nächsten",
"gestern", a date) decide on their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo

from psycopg_pool import AsyncConnectionPool

from novaberg.memory.time_expressions.parser import parse_time
from novaberg.store import day_anchors

PAST_FORMS: Final = re.compile(
    r"\b(war|warst|waren|wart|hatte|hattest|hatten|hattet|wurde|wurden|gewesen|gestern|vorgestern"
    r"|were|had|did|ago)\b"
    r"|\b(hab|habe|hast|hat|haben|habt|bin|bist|ist|sind|seid)\b.*\bge\w+(t|en)\b",
    re.IGNORECASE,
)
"""Tense cues of a past statement (simple past, perfect with a ge- participle)."""


def looks_past(statement: str) -> bool:
    """Whether the statement speaks of the past (see the module docstring)."""
    return PAST_FORMS.search(statement) is not None


def anchor_day(expression: str, statement: str, now: datetime, tz: ZoneInfo) -> date | None:
    """The local day `expression` names, said at `now` in `statement`; None when it names no
    day (a clock time alone, "bald", "früher")."""
    if not expression.strip():
        return None
    vector = parse_time(expression, now=now, tz=tz, prefer_future=not looks_past(statement))
    if vector is None or not vector.day_recognised:
        return None
    return vector.when.astimezone(tz).date()


def day_bounds(day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """[local midnight, next local midnight) of `day`."""
    start = datetime(day.year, day.month, day.day, tzinfo=tz)
    following = day + timedelta(days=1)
    return start, datetime(following.year, following.month, following.day, tzinfo=tz)


def anchor_title(day: date) -> str:
    return f"Erinnerungen vom {day:%d.%m.%Y}"


@dataclass(frozen=True, slots=True)
class Anchor:
    """A segment's anchor: the day and its timeline row."""

    day: date
    timeline_id: int
    created: bool

    def as_log(self) -> dict[str, object]:
        return {"tag": self.day.isoformat(), "timeline_id": self.timeline_id, "neu": self.created}


async def anchor(pool: AsyncConnectionPool, user_id: str, day: date, tz: ZoneInfo) -> Anchor:
    """The user's anchor row of `day`, found or created."""
    start, _ = day_bounds(day, tz)
    async with pool.connection() as conn:
        ident, created = await day_anchors.day_anchor(conn, user_id, start, anchor_title(day))
    return Anchor(day, ident, created)
