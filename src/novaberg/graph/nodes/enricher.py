"""Enricher: loads the context a run works with (docs/behaviour/nodes.md#enricher).

Two variants, chosen by `graph_role`:

- **human** (HumanGraph, `_enrich_human`): `raw_turns`, `user_intentionen` (of the last
  user turn that has a modus), `prompt_embedding` (of the raw stimulus), `aktivierte_ziele`,
  `ziel_vektoren` and `gravitationsterm`. No memory, no profiles.
- **character / agent** (full run): the same plus `session_turns` (without Nova's impulse
  turns), `session_summary`, `zielsog_roh`, `kzg_treffer`, `lzg_resonanz` and
  `memory_entries_raw` (short- and long-term memory resonance; the hybrid search's archived
  turns older than the session and long-term nodes sharing a rare word; the session summary
  and the recent turns). The payload's `user_intentionen` wins over the session's.

A failed embedding leaves `prompt_embedding` None (logged) and activates no goals. The
session, its summary and the goals are read here unless an earlier node of this run
already loaded them into `raw_turns` / `session_summary` / `geladene_ziele` (db_access
does in the CharacterGraph, together with its own reads; only the dispatcher writes the
session, at the end of a run, so they cannot be stale).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import stimulus_text
from novaberg.ei.goals import activate_goals
from novaberg.graph.state import ConversationState
from novaberg.llm.errors import ModelError
from novaberg.memory.bridge import MemoryResonance, RecallQuery, resonance
from novaberg.store.goals import load_activation_goals
from novaberg.store.keys import Pair
from novaberg.store.session import ROLE_ASSISTANT, ROLE_USER, read_summary, read_turns
from novaberg.wire import FIELD_USER_INTENTIONS, GRAPH_HUMAN

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


async def _goals(state: ConversationState, deps: GraphDeps, pair: Pair) -> list[dict[str, Any]]:
    """The goals db_access read (CharacterGraph), else read here (HumanGraph)."""
    loaded = state.get("loaded_goals")
    return list(loaded) if loaded is not None else await load_activation_goals(deps.pool, pair)


async def _summary(state: ConversationState, deps: GraphDeps, pair: Pair) -> str:
    """The session summary db_access read (CharacterGraph), else read here."""
    loaded = state.get("session_summary")
    return str(loaded) if loaded is not None else await read_summary(deps.redis, pair)


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
    embedding: list[float] | None,
    turns: Sequence[Mapping[str, Any]],
) -> MemoryResonance | None:
    """Short- and long-term memory and the hybrid search's recall for the stimulus; None
    without an embedding."""
    if embedding is None:
        return None
    internal = state.get("internal")
    return await resonance(
        deps.redis,
        deps.pool,
        deps.model,
        pair,
        embedding,
        cluster=(state.get("hypothesis_detail") or {}).get("cluster"),
        nova_emotion=internal.emotion.emotion if internal is not None else None,
        clock=deps.clock,
        recall=RecallQuery(
            text=stimulus_text(state),
            tz=deps.settings.tz,
            before=oldest_turn_time(turns),
            exclude_turn=state.get("turn_id"),
            character_name=state.get("character_name") or pair.character_id.title(),
        ),
    )


async def enricher(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Load turns, embed the stimulus, activate goals; the full variant adds session context."""
    pair = Pair(state["user_id"], state["character_id"])
    loaded = state.get("raw_turns")
    turns = list(loaded) if loaded is not None else await read_turns(deps.redis, pair)
    text = stimulus_text(state)
    full = state.get("graph_role") != GRAPH_HUMAN
    # goals and summary do not need the embedding: they are read while the model embeds
    embedding, goals, session_summary = await asyncio.gather(
        _embed(deps, text),
        _goals(state, deps, pair),
        _summary(state, deps, pair) if full else _nothing(""),
    )
    if embedding is None:
        goals = []  # nothing to activate them against
    found = await _resonance(state, deps, pair, embedding, turns) if full else None
    activation = activate_goals(embedding, goals)

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
    session_turns = without_impulses(turns)
    entries = session_memory_entries(session_summary, session_turns)
    update.update(
        session_turns=session_turns,
        session_summary=session_summary,
        raw_goal_pull=activation.raw_goal_pull,
        search_vector=embedding,
        search_text=text,
        search_text_source="abgeschaltet",
    )
    if found is not None:
        entries = [*found.entries(), *entries]
        update["short_term_hits"] = found.short_term
        update["long_term_resonance"] = found.long_term.as_state()
        summary["kzg_treffer"] = len(found.short_term)
        summary["lzg_erinnerungen"] = len(found.long_term.entries())
        summary["gesucht"] = len(found.recalled)
    update["memory_entries_raw"] = entries
    summary["memory_entries_raw"] = len(entries)
    return {**update, "_log": summary}
