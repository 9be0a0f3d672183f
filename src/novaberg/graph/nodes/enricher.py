"""Enricher: loads the context a run works with (docs/behaviour/nodes.md#enricher).

Two variants, chosen by `graph_role`:

- **human** (HumanGraph, `_enrich_human`): `raw_turns`, `user_intentionen` (of the last
  user turn that has a modus), `prompt_embedding` (of the raw stimulus), `aktivierte_ziele`,
  `ziel_vektoren` and `gravitationsterm`. No memory, no profiles.
- **character / agent** (full run): the same plus `session_turns` (without Nova's impulse
  turns), `zielsog_roh`, `suchtext`, `suchtext_herkunft`, `lzg_resonanz` and
  `memory_entries_raw` (short- and long-term memory resonance; the hybrid search's archived
  turns older than the session and long-term nodes sharing a rare word; the memories about
  a day the stimulus asks about, memory/day_recall.py; the session summary and the recent
  turns) and `library_notes` (wire `aufzeichnungen`: passages of the person's approved
  folders with evidence for the stimulus, memory/library/notes.py; a failed library is
  logged, named in the pipeline_log row as `aufzeichnungen_ausfall`, and the list set
  empty). The payload's `user_intentionen` wins over the session's, and
  Path 1's salience results (`graph/nodes/human_tail.py`: its intentions and
  `salienz_human`, awaited alongside the embedding and the rewrite when the event
  announces them) win over both — before the search key is formed.

The full variant searches memory with a *search key*, not the raw stimulus: the query
rewrite (`graph/query_rewrite.py`, one model line from the second turn on, run while the
stimulus is embedded) gives the search text and `suchtext_herkunft`; its embedding is
then pulled toward the activated goals by the landscape cluster's blend
(`ei/goals.search_key`). The cluster is the one the last turn's conversation vector
stored in `gv:detail` (default paradox); it also sets the long-term spreading depth. The
hybrid search's recall keeps the raw stimulus (its rare words). With a registry
(CharacterGraph), the agents' enrich hooks add their entries.

A failed embedding leaves `prompt_embedding` None (logged) and activates no goals. In
the CharacterGraph the session, its summary, the goals, the last `gv:detail` and the enrich
hooks' rows come with the turn context db_access read (`turn_context`; the session is
written only by the HumanGraph, before the event, and by the dispatcher after the release —
only the current user turn's `intentionen`/`kern` may still be filled in meanwhile). The
HumanGraph (its perception hands on the session it read) and the AgentGraph read what they
need through the same services (`memory/session_turns.py`, `agents/turn_context.py`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from novaberg.agents.base import BaseAgent
from novaberg.agents.deps import GraphDeps
from novaberg.agents.registry import AgentRegistry
from novaberg.agents.stimulus import stimulus_text
from novaberg.agents.turn_context import HookReads, TurnContext, goals_of, hypothesis_detail
from novaberg.ei.goals import GoalActivation, activate_goals, search_key
from novaberg.ei.landscape import DEFAULT_CLUSTER, known_cluster
from novaberg.graph.nodes.emotional_gravitation import gravity_points
from novaberg.graph.nodes.human_tail import path1_tail
from novaberg.graph.query_rewrite import REWRITE, SearchText, rewrite_query
from novaberg.graph.state import ConversationState
from novaberg.graph.turn_head import head_of
from novaberg.llm.errors import ModelError
from novaberg.memory import session_turns
from novaberg.memory.bridge import MemoryResonance, RecallQuery, resonance
from novaberg.memory.library.notes import library_notes
from novaberg.pair import Pair
from novaberg.wire import FIELD_USER_INTENTIONS, GRAPH_HUMAN, ROLE_ASSISTANT, ROLE_USER

log = logging.getLogger(__name__)


IMPULSE_KERN_PREFIX: Final = "[Nova-Impuls]"
"""session_turns leave out turns whose kern starts with this."""

RECENT_TURNS_AS_MEMORY: Final = 6
"""How many recent session turns become memory entries until real memory resonance exists."""

SUMMARY_WEIGHT: Final = 1.0
TURN_WEIGHT: Final = 0.5
"""Weights of session-derived memory entries (the reducer keeps the heavier duplicate)."""


def last_user_intentions(turns: Sequence[Mapping[str, Any]]) -> list[str]:
    """Intentions of the newest user turn that carries a modus."""
    for turn in reversed(turns):
        if turn.get("rolle") == ROLE_USER and turn.get("modus"):
            return [str(item) for item in turn.get("intentionen") or []]
    return []


def without_impulses(turns: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """session_turns: every turn except Nova's impulse turns."""
    return [
        dict(turn)
        for turn in turns
        if not str(turn.get("kern") or "").startswith(IMPULSE_KERN_PREFIX)
    ]


def session_memory_entries(summary: str, turns: Sequence[Mapping[str, Any]]) -> list[dict]:
    """ContextEntry dicts {quelle, subtyp, inhalt, gewicht, meta} from the session."""
    entries: list[dict[str, Any]] = []
    if summary.strip():
        entries.append(
            {
                "quelle": "session",
                "subtyp": "zusammenfassung",
                "inhalt": summary.strip(),
                "gewicht": SUMMARY_WEIGHT,
                "meta": {},
            }
        )
    for turn in list(turns)[-RECENT_TURNS_AS_MEMORY:]:
        text = str(turn.get("inhalt") or "").strip()
        if not text:
            continue
        speaker = "Nova" if turn.get("rolle") == ROLE_ASSISTANT else "Nutzer"
        entries.append(
            {
                "quelle": "session",
                "subtyp": "turn",
                "inhalt": f"{speaker}: {text}",
                "gewicht": TURN_WEIGHT,
                "meta": {
                    "rolle": turn.get("rolle"),
                    "emotion": turn.get("emotion"),
                    "zeit": turn.get("zeit"),
                },
            }
        )
    return entries


async def _embed(deps: GraphDeps, text: str) -> list[float] | None:
    try:
        return [float(x) for x in await deps.model.embed_one(text)]
    except (ModelError, OSError, RuntimeError) as exc:
        log.error("enricher: embedding failed (%s); no prompt_embedding, no goals", exc)
        return None


async def _goals(context: TurnContext | None, deps: GraphDeps, pair: Pair) -> list[dict[str, Any]]:
    """The goals of the turn context (CharacterGraph), else read (HumanGraph, AgentGraph)."""
    return list(context.goals) if context is not None else await goals_of(deps.pool, pair)


async def _summary(context: TurnContext | None, deps: GraphDeps, pair: Pair) -> str:
    """The session summary of the turn context (CharacterGraph), else read (AgentGraph)."""
    if context is not None:
        return context.session_summary
    return await session_turns.read_summary(deps.redis, pair)


async def _nothing(value: Any) -> Any:
    return value


def oldest_turn_time(turns: Sequence[Mapping[str, Any]]) -> float | None:
    """When the oldest turn the session still holds was said (the archive read leaves out
    what the session shows anyway)."""
    times = [float(t["zeit"]) for t in turns if isinstance(t.get("zeit"), int | float)]
    return min(times) if times else None


async def _resonance(
    state: ConversationState,
    deps: GraphDeps,
    pair: Pair,
    vector: list[float] | None,
    turns: Sequence[Mapping[str, Any]],
    cluster: str,
    rewritten: str = "",
) -> MemoryResonance | None:
    """Short- and long-term memory for the search key and the hybrid search's recall for
    the stimulus (and the words of its model rewrite, `rewritten`); None without a search
    key."""
    if vector is None:
        return None
    internal = state.get("internal")
    return await resonance(
        deps.redis,
        deps.pool,
        deps.model,
        pair,
        vector,
        cluster=cluster,
        nova_emotion=internal.emotion.emotion if internal is not None else None,
        clock=deps.clock,
        recall=RecallQuery(
            text=stimulus_text(state),
            tz=deps.settings.tz,
            before=oldest_turn_time(turns),
            exclude_turn=state.get("turn_id"),
            character_name=state.get("character_name") or pair.character_id.title(),
            rewritten=rewritten,
        ),
    )


async def _library(
    deps: GraphDeps, user_id: str, text: str, vector: list[float] | None
) -> tuple[list[dict[str, Any]], str | None]:
    """(`library_notes`, failure): the person's library for the stimulus. A failed source
    is logged and named; the list is then explicitly empty (docs/behaviour/library.md#in-a-turn)."""
    try:
        notes = await library_notes(deps.pool, deps.model, user_id, text, vector)
    except Exception as exc:  # the library must not cost the turn its memory
        log.error("enricher: the library search failed: %s", exc)
        return [], f"{type(exc).__name__}: {exc}"[:200]
    return [note.as_state() for note in notes], None


async def _hook(
    agent_name: str, hook: Any, deps: GraphDeps, user_id: str, text: str
) -> tuple[str, list[dict[str, Any]] | None]:
    try:
        return agent_name, list(await hook(deps, user_id, text))
    except Exception as exc:  # one agent's data must not cost the turn its memory
        log.error("enricher: enrich hook of %s failed: %s", agent_name, exc)
        return agent_name, None


async def _shaped(
    agent_name: str, agent: BaseAgent, deps: GraphDeps, rows: list[dict[str, Any]]
) -> tuple[str, list[dict[str, Any]] | None]:
    """A hook whose rows db_access read: only shaped here."""
    try:
        return agent_name, list(agent.enrich_rows(deps, rows))
    except Exception as exc:  # as a failed hook
        log.error("enricher: enrich hook of %s failed: %s", agent_name, exc)
        return agent_name, None


async def hook_entries(
    registry: AgentRegistry | None,
    deps: GraphDeps,
    user_id: str,
    text: str,
    read: HookReads | None = None,
) -> tuple[list[dict[str, Any]], dict[str, int | None]]:
    """The agents' enrich hooks, concurrently: (entries, count per agent; None = failed).
    A hook whose rows the turn context read for this very text (`read`) is only shaped."""
    if registry is None or not text.strip():
        return [], {}
    prefetched = dict(read.rows) if read is not None and read.text == text else {}
    results = await asyncio.gather(
        *(
            _shaped(name, agent, deps, prefetched[name])
            if name in prefetched
            else _hook(name, agent.enrich, deps, user_id, text)
            for name, agent in registry.all().items()
        )
    )
    entries = [entry for _, found in results for entry in found or []]
    return entries, {name: None if found is None else len(found) for name, found in results}


async def stored_cluster(deps: GraphDeps, pair: Pair, context: TurnContext | None = None) -> str:
    """The landscape cluster the last turn stored in gv:detail (from the turn context, else
    read), else paradox."""
    if context is not None:
        detail = context.hypothesis_detail
    else:
        detail = await hypothesis_detail(deps.redis, pair)
    return known_cluster((detail or {}).get("cluster")) or DEFAULT_CLUSTER


def shifted_key(
    vector: list[float], activation: GoalActivation, cluster: str, intentions: list[str]
) -> tuple[list[float], bool]:
    """(search key, shifted?): the goal pull of `ei/goals.search_key`."""
    goals = [
        (activation.goal_vectors[key], float(goal.get("aktivierungs_staerke") or 0.0))
        for key, goal in zip(activation.goal_vectors, activation.activated, strict=False)
    ]
    key = search_key(vector, goals, cluster, intentions)
    return key, key != vector


async def enricher(
    state: ConversationState, deps: GraphDeps, registry: AgentRegistry | None = None
) -> dict[str, Any]:
    """Load turns, embed the stimulus, activate goals; the full variant adds session context
    (and, with a `registry`, the agents' enrich hooks)."""
    pair = Pair(state["user_id"], state["character_id"])
    context = state.get("turn_context")
    known = state.get("raw_turns")  # db_access's (CharacterGraph) or perception's (HumanGraph)
    turns = list(known) if known is not None else await session_turns.read(deps.redis, pair)
    text = stimulus_text(state)
    full = state.get("graph_role") != GRAPH_HUMAN
    # goals, summary, cluster, the rewrite and Path 1's salience do not need the
    # embedding: all run at once
    embedding, goals, session_summary, cluster, rewritten, tail = await asyncio.gather(
        _embed(deps, text),
        _goals(context, deps, pair),
        _summary(context, deps, pair) if full else _nothing(""),
        stored_cluster(deps, pair, context) if full else _nothing(DEFAULT_CLUSTER),
        rewrite_query(
            deps.model,
            text,
            turns,
            head_of(state, deps, turns),
            enabled=deps.settings.query_rewrite_on,
        )
        if full
        else _nothing(SearchText(text, "")),
        path1_tail(state, deps) if full else _nothing({}),
    )
    if embedding is None:
        goals = []  # nothing to activate them against
    activation = activate_goals(embedding, goals)
    search_vector = embedding
    shifted = False
    library_vector: list[float] | None = None
    if full and embedding is not None:
        if rewritten.origin == REWRITE:
            search_vector = await _embed(deps, rewritten.text)
        library_vector = search_vector  # files are not pulled toward Nova's goals
        if search_vector is not None:
            payload_intentions = (state.get("event_payload") or {}).get(FIELD_USER_INTENTIONS)
            intentions = (
                [str(i) for i in payload_intentions]
                if isinstance(payload_intentions, list)
                else last_user_intentions(turns)
            )
            if "user_intentions" in tail:  # Path 1's salience of this very turn
                intentions = list(tail["user_intentions"])
            search_vector, shifted = shifted_key(search_vector, activation, cluster, intentions)
    found: MemoryResonance | None = None
    hooked: list[dict[str, Any]] = []
    hook_counts: dict[str, int | None] = {}
    notes: list[dict[str, Any]] = []
    library_failure: str | None = None
    if full:
        library_text = text if rewritten.origin != REWRITE else f"{text}\n{rewritten.text}"
        found, (hooked, hook_counts), (notes, library_failure) = await asyncio.gather(
            _resonance(
                state,
                deps,
                pair,
                search_vector,
                turns,
                cluster,
                rewritten.text if rewritten.origin == REWRITE else "",
            ),
            hook_entries(registry, deps, pair.user_id, text, context.hooks if context else None),
            _library(deps, pair.user_id, library_text, library_vector),
        )

    update: dict[str, Any] = {
        "raw_turns": turns,
        "user_intentions": last_user_intentions(turns),
        "prompt_embedding": embedding,
        "activated_goals": activation.activated,
        "goal_vectors": activation.goal_vectors,
        "gravitation_term": activation.gravitation_term,
    }
    summary: dict[str, Any] = {
        "variante": "human" if state.get("graph_role") == GRAPH_HUMAN else "voll",
        "turns": len(turns),
        "ziele": len(goals),
        "aktiviert": len(activation.activated),
        "gravitationsterm": round(activation.gravitation_term, 4),
        "embedding": embedding is not None,
    }
    if state.get("graph_role") == GRAPH_HUMAN:
        return {**update, "_log": summary}

    payload = state.get("event_payload") or {}
    if isinstance(payload.get(FIELD_USER_INTENTIONS), list):
        update["user_intentions"] = [str(item) for item in payload[FIELD_USER_INTENTIONS]]
    if tail:  # Path 1's salience ran after the hand-over: its results win
        summary["pfad1_nachlauf"] = tail.pop("_log", {})
        update.update(tail)
    shown = without_impulses(turns)
    entries = session_memory_entries(session_summary, shown)
    update.update(
        session_turns=shown,
        raw_goal_pull=activation.raw_goal_pull,
        search_text=rewritten.text,
        search_text_source=rewritten.origin,
    )
    summary.update(suchtext_herkunft=rewritten.origin, cluster=cluster, zielverschiebung=shifted)
    if found is not None:
        entries = [*found.entries(), *entries]
        update["long_term_resonance"] = found.long_term.as_state()
        update["gravitation_points"] = gravity_points(
            found.short_term, update["long_term_resonance"]["erinnerungen"], deps.clock()
        )
        summary["gravitationspunkte"] = len(update["gravitation_points"])
        summary["kzg_treffer"] = len(found.short_term)
        summary["lzg_erinnerungen"] = len(found.long_term.entries())
        summary["gesucht"] = len(found.recalled)
        day = found.day.as_log()
        if day is not None:
            summary["tag_erinnerungen"] = day
    if hooked:
        entries = [*entries, *hooked]
    if hook_counts:
        summary["hooks"] = hook_counts
    update["memory_entries_raw"] = entries
    summary["memory_entries_raw"] = len(entries)
    update["library_notes"] = notes  # set even when empty: the source was asked
    if notes:
        summary["aufzeichnungen"] = [note["label"] for note in notes]
    if library_failure is not None:
        summary["aufzeichnungen_ausfall"] = library_failure
    return {**update, "_log": summary}
