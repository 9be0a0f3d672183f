"""Background research for the `recherche` and `wissensluecken` jobs
(docs/behaviour/pixie.md#impulse-jobs).

With a search provider (`NOVABERG_SEARCH_URL`, the thinker's SearxNG): at most
`MAX_ROUNDS` search rounds. Each round searches, then one structured call (background
role) either gives the note (`NOTIZ`) or asks for one more, refined query (`SUCHE`); the
last round must give the note. A provider error or a round without a usable answer fails
the run (the task counts an attempt and is tried again later): results are never made up.

Without a provider: the 3 short-term memories nearest to the topic and one chat call for a
note from memory and the model's own knowledge, marked as such (`NO_PROVIDER_MARK`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import BaseModel, Field

from novaberg.config import Role
from novaberg.llm.base import Message
from novaberg.pair import Pair
from novaberg.pixie.scheduler import JobContext
from novaberg.store.short_term import ShortTermStore
from novaberg.websearch import SearchResult, WebSearchProvider

MAX_ROUNDS: Final = 3
"""Search rounds per research run."""

HITS_PER_ROUND: Final = 5
MEMORIES: Final = 3
"""Short-term memories a research without provider reads."""

SOURCE_WEB: Final = "websuche"
SOURCE_MEMORY: Final = "gedaechtnis+modellwissen"
"""`quelle` of a research note (job detail, stack entry reason)."""

NO_PROVIDER_MARK: Final = "(aus Gedächtnis und eigenem Wissen, ohne Websuche)"
"""How a research result without a search provider is marked as such."""

MEMORY_SYSTEM: Final = (
    "Du bist Nova und denkst im Hintergrund über ein Thema aus einem Gespräch nach. "
    "Es gibt keine Websuche: nutze nur die Erinnerungen unten und dein eigenes Wissen, "
    "und sage ehrlich, wo du unsicher bist. Antworte in höchstens drei Sätzen, als Notiz "
    "an dich selbst, was du dem Menschen dazu sagen könntest."
)

WEB_SYSTEM: Final = (
    "Du bist Nova und recherchierst im Hintergrund ein Thema aus einem Gespräch. Unten "
    "stehen die Suchergebnisse der bisherigen Runden. Antworte mit ergebnis NOTIZ und einer "
    "Notiz von höchstens drei Sätzen an dich selbst, was du dem Menschen dazu sagen "
    "könntest (nur was die Ergebnisse stützen), oder mit ergebnis SUCHE und einer "
    "genaueren Suchanfrage in `anfrage`, wenn die Ergebnisse nicht reichen."
)

LAST_ROUND: Final = "Letzte Runde: antworte jetzt mit ergebnis NOTIZ."


class ResearchStep(BaseModel):
    """One structured answer of a search round: the note, or one more query."""

    ergebnis: Literal["NOTIZ", "SUCHE"]
    notiz: str = Field(default="", max_length=1200)
    anfrage: str = Field(default="", max_length=200)


@dataclass
class ResearchNote:
    """What a research run found: the note, its source, the queries and addresses used."""

    note: str
    source: str
    queries: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    memories: int = 0

    def text(self, topic: str) -> str:
        """The note as Nova's own thought, its source named."""
        if self.source == SOURCE_WEB:
            where = ", ".join(self.urls[:3])
            return f"Recherche zu „{topic}“ (Websuche: {where}): {self.note}"
        return f"Recherche zu „{topic}“ {NO_PROVIDER_MARK}: {self.note}"


def _hits_text(rounds: Sequence[tuple[str, Sequence[SearchResult]]]) -> str:
    blocks = []
    for number, (query, hits) in enumerate(rounds, start=1):
        lines = [f"[RUNDE {number}] Suche: {query}"]
        lines += [f"- {h.title} ({h.url}): {h.snippet}" for h in hits] or ["- keine Treffer"]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


async def _web(ctx: JobContext, web: WebSearchProvider, topic: str, context: str) -> ResearchNote:
    query = topic if not context else f"{topic} {context[:120]}"
    rounds: list[tuple[str, list[SearchResult]]] = []
    for number in range(1, MAX_ROUNDS + 1):
        hits = await web.search(query, HITS_PER_ROUND)
        rounds.append((query, hits))
        last = number == MAX_ROUNDS
        prompt = (
            f"Thema: {topic}\nAnlass: {context or '-'}\n\nSuchergebnisse:\n{_hits_text(rounds)}"
            + (f"\n\n{LAST_ROUND}" if last else "")
        )
        messages: Sequence[Message] = [
            {"role": "system", "content": WEB_SYSTEM},
            {"role": "user", "content": prompt},
        ]
        async with ctx.model_slot():
            step = await ctx.model.structured(Role.BACKGROUND, messages, ResearchStep)
        note = step.notiz.strip()
        if step.ergebnis == "NOTIZ" and note:
            urls = list(dict.fromkeys(h.url for _, found in rounds for h in found))
            return ResearchNote(note, SOURCE_WEB, [q for q, _ in rounds], urls)
        refined = " ".join(step.anfrage.split())
        if last or step.ergebnis != "SUCHE" or not refined:
            break
        query = refined
    raise RuntimeError(f"no research note after {len(rounds)} search round(s)")


async def _memory(ctx: JobContext, pair: Pair, topic: str, context: str) -> ResearchNote:
    async with ctx.model_slot():
        vector = await ctx.model.embed_one(f"{topic} {context}".strip())
    hits = await ShortTermStore(ctx.redis).nearest(pair, vector, MEMORIES)
    memories = [h.fields.get("inhalt", "") for h in hits if h.fields.get("inhalt")]
    prompt = f"Thema: {topic}\nAnlass: {context or '-'}\nErinnerungen:\n" + (
        "\n".join(f"- {m}" for m in memories) or "- keine"
    )
    messages: Sequence[Message] = [
        {"role": "system", "content": MEMORY_SYSTEM},
        {"role": "user", "content": prompt},
    ]
    async with ctx.model_slot():
        note = (await ctx.model.chat(Role.BACKGROUND, messages, max_tokens=200)).strip()
    if not note:
        raise RuntimeError("the model returned no research note")
    return ResearchNote(note, SOURCE_MEMORY, memories=len(memories))


async def research(ctx: JobContext, pair: Pair, topic: str, context: str) -> ResearchNote:
    """Research `topic` through the search provider in `ctx.services["web"]`, or from
    memory and own knowledge without one."""
    web: WebSearchProvider | None = ctx.services.get("web")
    if web is not None:
        return await _web(ctx, web, topic, context)
    return await _memory(ctx, pair, topic, context)
