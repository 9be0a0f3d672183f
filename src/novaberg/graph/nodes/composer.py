"""Composer (Verfasser): decides *what* the answer says before the responder decides *how*
(docs/behaviour/nodes.md#composer).

One free-text call (temperature 0.4) sees the memory in the composer's names (Person A =
the user, Person B = the character: no block addresses the model as the character), the
turn's appointments, situation and stance when those channels exist, the search context
and the recent history. It writes a head block — the objection verdict
(`graph/objection.py`) — then `---` and the third-person content `response_content`
(wire `antwort_inhalt`), which the responder turns into Nova's words.

- Skipped on `task_context_cut` (an agent reported what it did; the task block is the
  content): no call, `response_content` "". When it runs after agents (they only asked
  back), every agent result is an `[AUFTRAEGE]` line, so the content leads to the question
  instead of talking past it; without agents there is no such block.
- Search context: when the router asked for the web and a search provider is configured,
  the stimulus is searched once and the top hits become `web_context`; without a
  provider nothing is searched and nothing is invented.
- Library (`library_notes`, the enricher's passages of the person's approved folders):
  `[AUFZEICHNUNGEN]` lists each with its file, page or heading and lines, and asks the
  content to quote the passage and name where it stands; without passages no block, so a
  plain message's prompt does not grow.
- A failed call (timeout, unreadable) or empty output leaves `response_content` "" (the
  responder then answers from the stimulus alone) and a verdict not `delivered`;
  the turn goes on. A model that cannot be used at all (`ModelUnavailable`) fails the turn.
- A verdict that contests the premise is added to `node_annotations`, so the tribunal
  sees it too.
- On an impulse turn with a bridge to the turn that caused it (`sachlage_bruecke`, the
  situation node), `[SACHLAGE-BRUECKE]` says what that conversation was about, so a result
  that arrives hours later is said in the context that caused it; a bridge found by
  similarity is marked as a guess.
- Open questions (`graph/knowledge_gaps.py`): when the pair has open knowledge questions,
  the first few are offered as `[OFFENE-FRAGEN]` and written to `uptake_offers`, exactly
  those, so the uptake node measures what was offered; without any there is no block.
- The offer (`graph/offer_chain.py`): on a turn where Nova may offer something an agent can
  do, the prompt lists the offerable agents (`[ANGEBOT]`) and an `ANGEBOT:` head line
  becomes `offer_candidate`; on a bare yes with no offer open, `[ZUSTIMMUNG]` tells it that
  nothing was executed. Neither block appears on any other turn.

It does not read the conversation vector's hypothesis: it is meant to run concurrently
with that call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.agents.registry import AgentRegistry
from novaberg.agents.stimulus import stimulus_is_own_thought, stimulus_text
from novaberg.agents.task_block import outcome_lines
from novaberg.config import Role
from novaberg.graph.knowledge_gaps import offer_lines, offers_for
from novaberg.graph.nodes.reducer import contexts_beside_head
from novaberg.graph.nodes.situation import FOUND_BY_SIMILARITY
from novaberg.graph.objection import (
    FAILURE_CALL,
    ObjectionVerdict,
    failed,
    parse_composer_output,
)
from novaberg.graph.offer_chain import (
    OFFER_GRAPH,
    REPLY_WITHOUT_OFFER,
    offer_choices,
    read_offer_line,
)
from novaberg.graph.person_block import composer_person
from novaberg.graph.state import ConversationState
from novaberg.graph.turn_head import head_of, with_head
from novaberg.llm.errors import ModelError, ModelUnavailable
from novaberg.prompts import render
from novaberg.websearch import WebSearchError

log = logging.getLogger(__name__)

COMPOSER_TEMPERATURE: Final = 0.4
HISTORY_TURNS: Final = 4
HISTORY_CHARS: Final = 200
SEARCH_HITS: Final = 5
BLOCK_CHARS: Final = 1200
"""Prompt budget per optional block (the bundled model has a 2048-token context)."""

UNREAD_KEYS: Final = frozenset({"details", "initiative_grund", "turn_id"})
"""Keys of the stance and situation channels the composer's prompt leaves out: the
stance's per-magnitude working (`details`, whose results are the magnitudes above it) and
the reason of its initiative (the computation's numbers), and the situation's turn id —
tokens the model pays for on every turn and reads nothing from."""

OWN_THOUGHT_PREFIX: Final = "Eigener Gedanke von Person B (niemand hat geschrieben): "


def _clip(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def value_text(value: Any) -> str:
    """A channel value as prompt lines: text as is, a mapping as `key: value` lines,
    a list one item a line, a dataclass or `to_dict()` object through its dict; empty
    values give "". The situation, stance and appointment channels are written by other
    nodes; this keeps the composer independent of their exact shape."""
    if value is None:
        return ""
    if hasattr(value, "to_dict") and callable(value.to_dict):
        value = value.to_dict()
    elif is_dataclass(value) and not isinstance(value, type):
        value = asdict(value)
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, Mapping):
        lines = []
        for key, item in value.items():
            text = value_text(item)
            if text.strip():
                lines.append(f"{key}: {' '.join(text.split())}")
        return "\n".join(lines)
    if isinstance(value, (list, tuple)):
        return "\n".join(f"- {value_text(item)}" for item in value if value_text(item))
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def read_part(value: Any) -> Any:
    """A stance or situation mapping without its `UNREAD_KEYS` (anything else as is)."""
    if isinstance(value, Mapping):
        return {key: item for key, item in value.items() if key not in UNREAD_KEYS}
    return value


def bridge_text(bridge: Mapping[str, Any] | None) -> str:
    """The `[SACHLAGE-BRUECKE]` lines of an impulse: what the conversation that caused it
    was about — the triggering turn's understanding, or (found by similarity) what the
    person said then, marked as a guess. "" on user turns and when no trigger was found."""
    if not bridge or not bridge.get("gefunden"):
        return ""
    lines = []
    if bridge.get("ausloeser_text"):
        when = str(bridge.get("ausloeser_zeit") or "")[:16].replace("T", " ")
        lines.append(
            f"Person A sagte damals{f' ({when})' if when else ''}: „{bridge['ausloeser_text']}“"
        )
    if bridge.get("gegenstand_damals"):
        lines.append(f"Damals ging es um: {bridge['gegenstand_damals']}")
    if bridge.get("objekte_damals"):
        lines.append("Dinge damals: " + ", ".join(bridge["objekte_damals"]))
    if bridge.get("gleicher_gegenstand") is not None:
        same = "ja" if bridge["gleicher_gegenstand"] else "nein, das Gespräch ist weiter"
        lines.append(f"Noch derselbe Gegenstand: {same}")
    if bridge.get("gefunden_durch") == FOUND_BY_SIMILARITY:
        lines.append("(Der Zusammenhang ist nach Ähnlichkeit gefunden, nicht sicher.)")
    return "\n".join(lines)


def library_text(notes: Any) -> str:
    """The `[AUFZEICHNUNGEN]` lines: each passage of the person's files this turn found
    (`library_notes`, the enricher), with where it stands; "" when none (no block)."""
    lines = []
    for note in notes or []:
        text = " ".join(str(note.get("text") or "").split())
        if text:
            lines.append(f"- ({note.get('label') or note.get('file')}) „{text}“")
    return "\n".join(lines)


def build_prompt(
    state: ConversationState, search_context: str, offers: str = "", open_questions: str = ""
) -> str:
    """The rendered `composer` template (`offers`: the `[ANGEBOT]` lines, `open_questions`
    the `[OFFENE-FRAGEN]` lines; "" for none)."""
    stimulus = stimulus_text(state)
    anlass = OWN_THOUGHT_PREFIX + stimulus if stimulus_is_own_thought(state) else stimulus
    return render(
        "composer",
        person_a=composer_person(state),
        erinnerung=_clip(contexts_beside_head(state)[1], BLOCK_CHARS * 2),
        termine=_clip(value_text(state.get("appointment_reading")), BLOCK_CHARS),
        sachlage=_clip(value_text(read_part(state.get("situation"))), BLOCK_CHARS),
        bruecke=_clip(bridge_text(state.get("situation_bridge")), BLOCK_CHARS),
        dienste=offers,
        haltung=value_text(read_part(state.get("stance"))),
        suchkontext=_clip(search_context, BLOCK_CHARS * 2),
        aufzeichnungen=library_text(state.get("library_notes"))[: BLOCK_CHARS * 2],
        auftraege=outcome_lines(state.get("agent_results"))[:BLOCK_CHARS],
        offene_fragen=open_questions,
        charakter=str(state.get("character_id") or "nova").upper(),
        zustimmung=stimulus if state.get("offer_reply") == REPLY_WITHOUT_OFFER else "",
        anlass=anlass or "(leer)",
    )


async def search_context(state: ConversationState, deps: GraphDeps) -> tuple[str, str | None]:
    """(`web_context`, failure) for this turn: the stimulus searched once when the router
    asked for the web and a provider is configured; ("", None) otherwise."""
    existing = (state.get("web_context") or "").strip()
    if existing or not state.get("needs_web") or deps.web is None:
        return existing, None
    query = stimulus_text(state).strip()
    if not query:
        return "", None
    try:
        hits = await deps.web.search(query, SEARCH_HITS)
    except WebSearchError as exc:
        log.warning("composer: web search failed (turn=%s): %s", state.get("turn_id"), exc)
        return "", str(exc)[:200]
    return "\n".join(f"- {h.title} ({h.url}): {h.snippet}" for h in hits), None


def annotation(verdict: ObjectionVerdict) -> str | None:
    """The tribunal's note on a contested premise; None when nothing is contested."""
    if not verdict.contests:
        return None
    return (
        f"Verfasser: Einwand ({verdict.assessment}, Stärke {verdict.strength}): {verdict.checked}"
    )


async def composer(
    state: ConversationState, deps: GraphDeps, registry: AgentRegistry | None = None
) -> dict[str, Any]:
    """Write `response_content` and `objection_verdict` (and `web_context` when searched,
    `offer_candidate` when Nova offers something)."""
    if state.get("task_context_cut"):
        return {
            "response_content": "",
            "uptake_offers": [],  # nothing was offered
            "_log": {"uebersprungen": "task_context_cut"},
        }
    web_context, web_failure = await search_context(state, deps)
    offers = offer_choices(state, registry)
    questions = offers_for(state)  # [OFFENE-FRAGEN]: what the uptake node measures
    prompt = build_prompt(state, web_context, offers, offer_lines(questions))
    candidate = None
    try:
        raw = await deps.model.chat(
            Role.ANALYSIS, with_head(head_of(state, deps), prompt), temperature=COMPOSER_TEMPERATURE
        )
    except ModelUnavailable:
        raise  # the model cannot be used at all: the turn fails (events.outcomes)
    except ModelError as exc:
        log.warning("composer: call failed (turn=%s): %s", state.get("turn_id"), exc)
        content, verdict = "", failed(FAILURE_CALL)
    else:
        if offers and registry is not None:
            raw, candidate = read_offer_line(raw, registry.offerable(OFFER_GRAPH))
        content, verdict = parse_composer_output(raw)
    update: dict[str, Any] = {
        "response_content": content,
        "objection_verdict": verdict.to_dict(),
        "web_context": web_context,
        "uptake_offers": questions,
    }
    if candidate is not None:
        update["offer_candidate"] = candidate
    note = annotation(verdict)
    if note:
        update["node_annotations"] = [note]
    summary: dict[str, Any] = {"laenge": len(content), "einwandsurteil": verdict.to_dict()}
    if web_context:
        summary["suchkontext"] = len(web_context)
    if state.get("library_notes"):  # the [AUFZEICHNUNGEN] block was in the prompt
        summary["aufzeichnungen"] = len(state.get("library_notes") or [])
    if web_failure:
        summary["suche_ausfall"] = web_failure
    if offers:
        summary["angebot_kandidat"] = candidate
    bridge = state.get("situation_bridge") or {}
    if bridge.get("gefunden"):  # the [SACHLAGE-BRUECKE] block was in the prompt
        summary["bruecke"] = {
            "ausloeser_turn_id": bridge.get("ausloeser_turn_id"),
            "gefunden_durch": bridge.get("gefunden_durch"),
        }
    if questions:
        summary["offene_fragen"] = [q["id"] for q in questions]
    update["_log"] = summary
    return update
