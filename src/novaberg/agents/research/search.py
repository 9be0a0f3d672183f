"""Search for the research agent: what can be found at once
(docs/behaviour/agents.md#research).

- **Memory**: the hybrid search over the pair's archive, short- and long-term memory
  (memory/search/hybrid.py: one embedding, no chat call), without the turn the promise
  answers (the question itself and the promise would be the best "hits"). A hit counts
  when it shares a word with the question or its cosine is at least `MIN_COSINE`;
  at most `MEMORY_HITS`. A passage of the person's files names where it stands
  ("(vertrag.pdf, S. 2, Z. 1–2) …"), as the thinker's search does: a report that quotes a
  file without saying which reads as Nova's own memory.
- **Web**: one search through the configured provider (`NOVABERG_SEARCH_URL`), top
  `WEB_HITS`; without a provider none, and a provider error is recorded, never replaced by
  made-up results.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from novaberg.agents.base import AgentState
from novaberg.agents.workflow import now_from, step
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import LibrarySource, MemoryHit, SearchOptions
from novaberg.pair import Pair
from novaberg.websearch import WebSearchError

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

log = logging.getLogger(__name__)

MEMORY_HITS: Final = 3
WEB_HITS: Final = 3
MIN_COSINE: Final = 0.5
TEXT_CHARS: Final = 300


def _relevant(hit: MemoryHit, turn_id: str) -> bool:
    if any(source.turn_id == turn_id for source in hit.sources):
        return False
    cosine = hit.best_cosine()
    return hit.found_by_words() or (cosine is not None and cosine >= MIN_COSINE)


def memory_line(hit: MemoryHit) -> str:
    """A hit as one line of `erinnerungen`: its text, a library passage's with its label."""
    text = " ".join(hit.text.split())[:TEXT_CHARS]
    source = hit.sources[0] if hit.sources else None
    return f"({source.label()}) {text}" if isinstance(source, LibrarySource) else text


async def search_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    context = state.get("context") or {}
    pair = Pair(str(context["user_id"]), str(context["character_id"]))
    question = str(parameter["frage"])
    turn_id = str(parameter.get("bezug_turn_id") or "")
    found = await search_memory(
        deps.redis,
        deps.pool,
        deps.model,
        pair,
        question,
        now=now_from(deps),
        tz=deps.settings.tz,
        options=SearchOptions(limit=MEMORY_HITS * 3, exclude_turn=turn_id or None),
    )
    memories = [memory_line(hit) for hit in found.hits if _relevant(hit, turn_id)][:MEMORY_HITS]
    web: list[dict[str, str]] = []
    web_failure = ""
    if deps.web is not None:
        try:
            hits = await deps.web.search(question, WEB_HITS)
            web = [{"titel": h.title, "url": h.url, "auszug": h.snippet} for h in hits]
        except WebSearchError as exc:
            web_failure = str(exc)[:200]
            log.warning("research: the web search failed (%s); nothing from the web", exc)
    parameter.update(erinnerungen=memories, web=web, web_ausfall=web_failure)
    return {
        "parameter": parameter,
        "steps": step(
            "suchen",
            "ok",
            erinnerungen=len(memories),
            web=len(web) if deps.web is not None else None,
            web_ausfall=web_failure or None,
        ),
    }
