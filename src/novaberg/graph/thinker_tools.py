"""The thinker's tools and their per-turn cache (docs/behaviour/nodes.md#thinker).

A tool call is written `name(parameter)`. Offered always: `timeline_check(<ISO date>)`
(the user's appointments on that local day), `timeline_search(keyword)` (appointments
whose title contains it), `memory_search(query)` (the hybrid memory search over every
layer, top 20; a passage of the person's approved folders names its file and page). Offered only with a search provider (`NOVABERG_SEARCH_URL`): `web_search(query)`
(top 5, plus the text of the first page) and `web_fetch(url)`. A call the cache already
answered this turn gets the same text back with a hint that it was asked before.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from typing import Any, Final
from zoneinfo import ZoneInfo

from novaberg.agents.deps import GraphDeps
from novaberg.agents.timeline import repository as timeline
from novaberg.graph.state import ConversationState
from novaberg.llm.errors import ModelError
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import LibrarySource, MemoryHit, SearchOptions
from novaberg.pair import Pair
from novaberg.websearch import WebSearchError

MEMORY_TOP_K: Final = 20
WEB_TOP_K: Final = 5
RESULT_CHARS: Final = 1500
"""An observation is cut to this many characters (the model's context is small)."""

REPEAT_HINT: Final = "(Diese Abfrage hast du in diesem Turn schon gestellt; das Ergebnis war:)"

BASE_TOOLS: Final = ("timeline_check", "timeline_search", "memory_search")
WEB_TOOLS: Final = ("web_search", "web_fetch")

TOOL_HELP: Final = {
    "timeline_check": "timeline_check(2026-12-31) – Termine an diesem Tag (Datum als Jahr-Monat-Tag)",
    "timeline_search": "timeline_search(stichwort) – Termine, deren Titel das Stichwort enthält",
    "memory_search": "memory_search(suchtext) – was im Gedächtnis dazu steht",
    "web_search": "web_search(suchtext) – Websuche, fünf Treffer und der Text des ersten",
    "web_fetch": "web_fetch(https://…) – der Text einer Webseite",
}

_CALL = re.compile(r"^\s*(?:TOOL:\s*)?([a-z_]+)\s*\((.*)\)\s*$", re.DOTALL)


def parse_call(text: str) -> tuple[str, str] | None:
    """(name, parameter) of `name(parameter)` or `TOOL: name(parameter)`; None otherwise.
    Quotes around the parameter are dropped."""
    match = _CALL.match(text or "")
    if not match:
        return None
    return match.group(1), match.group(2).strip().strip("\"'").strip()


def offered_tools(deps: GraphDeps) -> tuple[str, ...]:
    """The tools this run may call: the web tools only with a provider (never faked)."""
    return BASE_TOOLS + (WEB_TOOLS if deps.web is not None else ())


def tools_text(names: tuple[str, ...]) -> str:
    return "\n".join(f"- {TOOL_HELP[name]}" for name in names)


def _clip(text: str) -> str:
    return text if len(text) <= RESULT_CHARS else text[: RESULT_CHARS - 1] + "…"


def _entry_line(row: dict[str, Any], zone: ZoneInfo) -> str:
    when = row.get("event_time")
    stamp = when.astimezone(zone).strftime("%Y-%m-%d %H:%M") if isinstance(when, datetime) else "?"
    return f"- {stamp} {row.get('title') or ''} ({row.get('event_type') or 'termin'})"


def _where(hit: MemoryHit) -> str:
    """A hit's layer, or for a passage of the person's files where it stands
    ("vertrag.pdf, S. 2, Z. 1–2"), so a fact check can cite it."""
    source = hit.sources[0] if hit.sources else None
    return source.label() if isinstance(source, LibrarySource) else hit.layer


class ThinkerTools:
    """Runs the tool calls of one thinker run, with the per-turn cache."""

    def __init__(self, state: ConversationState, deps: GraphDeps) -> None:
        self.state = state
        self.deps = deps
        self.names = offered_tools(deps)
        self.cache: dict[tuple[str, str], str] = {}
        self.zone = ZoneInfo(deps.settings.timezone)
        self.pair = Pair(state["user_id"], state["character_id"])
        self._run: dict[str, Callable[[str], Awaitable[str]]] = {
            "timeline_check": self.timeline_check,
            "timeline_search": self.timeline_search,
            "memory_search": self.memory_search,
            "web_search": self.web_search,
            "web_fetch": self.web_fetch,
        }

    async def call(self, name: str, parameter: str) -> tuple[str, bool]:
        """(observation, from the cache?) of one call; unknown or unoffered tools and bad
        parameters give an observation saying so, never an exception."""
        if name not in self.names:
            return (
                f"Werkzeug {name!r} gibt es hier nicht. Verfügbar: {', '.join(self.names)}.",
                False,
            )
        key = (name, parameter.lower())
        if key in self.cache:
            return f"{REPEAT_HINT}\n{self.cache[key]}", True
        result = _clip(await self._run[name](parameter))
        self.cache[key] = result
        return result, False

    async def timeline_check(self, parameter: str) -> str:
        try:
            day = date.fromisoformat(parameter)
        except ValueError:
            return f"Kein Datum im Format Jahr-Monat-Tag (2026-12-31): {parameter!r}."
        start = datetime(day.year, day.month, day.day, tzinfo=self.zone)
        rows = await timeline.in_range(
            self.deps.pool, self.pair.user_id, start, start + timedelta(days=1)
        )
        if not rows:
            return f"Am {day.isoformat()} steht nichts in der Timeline."
        return "\n".join(_entry_line(row, self.zone) for row in rows)

    async def timeline_search(self, parameter: str) -> str:
        if not parameter:
            return "Kein Stichwort."
        rows = await timeline.by_title(self.deps.pool, self.pair.user_id, parameter)
        if not rows:
            return f"Kein Termin mit {parameter!r} im Titel."
        return "\n".join(_entry_line(row, self.zone) for row in rows)

    async def memory_search(self, parameter: str) -> str:
        if not parameter:
            return "Kein Suchtext."
        now = datetime.fromtimestamp(self.deps.clock(), self.zone)
        try:
            result = await search_memory(
                self.deps.redis, self.deps.pool, self.deps.model, self.pair, parameter,
                now=now, tz=self.zone, options=SearchOptions(limit=MEMORY_TOP_K),
            )  # fmt: skip
        except ModelError as exc:
            return f"Gedächtnissuche fehlgeschlagen ({type(exc).__name__})."
        lines = [
            f"- ({_where(hit)}) {' '.join(hit.text.split())}" for hit in result.hits if hit.text
        ]
        return "\n".join(lines) if lines else "Im Gedächtnis steht nichts dazu."

    async def web_search(self, parameter: str) -> str:
        assert self.deps.web is not None  # only offered with a provider
        try:
            hits = await self.deps.web.search(parameter, WEB_TOP_K)
        except WebSearchError as exc:
            return f"Websuche fehlgeschlagen: {exc}"
        if not hits:
            return "Die Websuche fand nichts."
        lines = [f"- {hit.title} ({hit.url}): {hit.snippet}" for hit in hits]
        try:
            first = await self.deps.web.fetch(hits[0].url)
        except WebSearchError as exc:
            first = f"(nicht lesbar: {exc})"
        return "\n".join(lines) + f"\n[Text von {hits[0].url}]\n{first}"

    async def web_fetch(self, parameter: str) -> str:
        assert self.deps.web is not None
        try:
            return await self.deps.web.fetch(parameter) or "Die Seite hat keinen Text."
        except WebSearchError as exc:
            return f"Abruf fehlgeschlagen: {exc}"
