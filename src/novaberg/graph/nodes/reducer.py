"""Reducer node, CharacterGraph only (docs/behaviour/nodes.md#reducer).

The enricher gathers memory from several sources (short-term, long-term, agent hooks), and
the same remembered sentence often arrives twice. The reducer keeps one copy of each, drops
fragments a longer entry already says, and renders the survivors twice:

- `memory_context` in the third person with names ("Nova", "der Nutzer") for the analysis
  nodes (thinker, tribunal, corrector);
- `memory_context_verfasser` with the neutral names of the composer ("Person A" = the
  user, "Person B" = the character), so no block addresses the model *as* the character
  (no prompt block speaks to the model as the character).

Both are written on **every** return path, also when there is nothing to say (then both
are ""), so a stale context from an earlier node can never leak into this turn.

Entries are `ContextEntry` objects (memory developer, `memory/context.py`) or plain dicts;
both are read through `entry_field` (attribute or key `quelle`, `inhalt`, `gewicht`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.ei.canon import parse_number
from novaberg.graph.state import ConversationState

log = logging.getLogger(__name__)

SUBSTRING_MIN_CHARS: Final = 10
"""Only texts of at least this many (normalised) chars are dropped as contained in a longer
one; shorter ones ("ja", "Katze") would vanish inside almost anything."""

MAX_CONTEXT_ENTRIES: Final = 8
ENTRY_MAX_CHARS: Final = 300
"""Rendering budget: the bundled model has a 2048-token context
(docs/behaviour/llm.md#local-model). The deduped `memory_entries` keep everything; only the
rendered text is capped."""

USER_ALIAS: Final = "Person A"
CHARACTER_ALIAS: Final = "Person B"
"""Names of the composer rendering (the third-person one says Nova / der Nutzer)."""

_USER_FORMS: Final = (
    (re.compile(r"\bdes Nutzers\b"), "von Person A"),
    (re.compile(r"\b[Dd](?:er|em|en) Nutzer(?:in)?\b"), USER_ALIAS),
    (re.compile(r"\b[Dd]ie Nutzerin\b"), USER_ALIAS),
    (re.compile(r"\b[Tt]he user\b"), USER_ALIAS),
    (re.compile(r"\bNutzer(?:in)?\b"), USER_ALIAS),
    (re.compile(r"\buser\b"), USER_ALIAS),
)


def entry_field(entry: Any, name: str, default: Any = None) -> Any:
    """Read `name` from a dict entry or an attribute of an object entry."""
    if isinstance(entry, Mapping):
        return entry.get(name, default)
    return getattr(entry, name, default)


def normalise(text: str) -> str:
    """Lower-case with whitespace collapsed: the key of the exact dedup."""
    return " ".join(str(text).lower().split())


def _weight(entry: Any) -> float:
    number = parse_number(entry_field(entry, "gewicht"))
    return number if number is not None else 0.0


def dedupe_entries(entries: Iterable[Any]) -> list[Any]:
    """Exact dedup (highest weight wins), then drop texts ≥ 10 chars inside a longer one.

    Entries without text are dropped. The result is sorted by weight, heaviest first
    (stable for equal weights, so the enricher's order breaks ties).
    """
    best: dict[str, Any] = {}
    order: list[str] = []
    for entry in entries:
        key = normalise(entry_field(entry, "inhalt") or "")
        if not key:
            continue
        if key not in best:
            best[key] = entry
            order.append(key)
        elif _weight(entry) > _weight(best[key]):
            best[key] = entry
    kept = [
        key
        for key in order
        if len(key) < SUBSTRING_MIN_CHARS
        or not any(key != other and len(other) > len(key) and key in other for other in order)
    ]
    survivors = [best[key] for key in kept]
    return sorted(survivors, key=_weight, reverse=True)


def character_display_name(character_id: str) -> str:
    """The name the context uses for the character ("nova" → "Nova")."""
    return (character_id or "nova").strip().title() or "Nova"


def to_composer_names(text: str, character_name: str) -> str:
    """Rewrite a third-person line into the composer's names (Person A / Person B)."""
    if character_name:
        name = re.escape(character_name)
        text = re.sub(rf"\b{name}s\b", f"von {CHARACTER_ALIAS}", text, flags=re.IGNORECASE)
        text = re.sub(rf"\b{name}\b", CHARACTER_ALIAS, text, flags=re.IGNORECASE)
    for pattern, replacement in _USER_FORMS:
        text = pattern.sub(replacement, text)
    return text


def _clip(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= ENTRY_MAX_CHARS else flat[: ENTRY_MAX_CHARS - 1] + "…"


def render_contexts(entries: list[Any], character_name: str) -> tuple[str, str]:
    """(memory_context, memory_context_verfasser); ("", "") without entries."""
    if not entries:
        return "", ""
    lines = []
    for entry in entries[:MAX_CONTEXT_ENTRIES]:
        source = str(entry_field(entry, "quelle") or "erinnerung")
        lines.append(f"- ({source}) {_clip(entry_field(entry, 'inhalt') or '')}")
    third = f"Was {character_name} über das Gespräch mit dem Nutzer weiß:\n" + "\n".join(lines)
    composer = to_composer_names(third, character_name)
    return third, composer


def _is_session_turn(entry: Any) -> bool:
    return entry_field(entry, "quelle") == "session" and entry_field(entry, "subtyp") == "turn"


def contexts_beside_head(state: Mapping[str, Any]) -> tuple[str, str]:
    """(memory_context, memory_context_verfasser) for a call that begins with the turn's
    head (graph/turn_head.py): without the session's recent turns, which the head already
    shows in full — the same lines twice cost tokens in every judge and the composer. The
    session summary and every other memory stay. Falls back to the rendered channels when
    the run has no entries (a state built by hand)."""
    if "memory_entries" not in state:
        return state.get("memory_context") or "", state.get("memory_context_composer") or ""
    entries = list(state.get("memory_entries") or [])[:MAX_CONTEXT_ENTRIES]
    name = character_display_name(state.get("character_id", ""))
    return render_contexts([e for e in entries if not _is_session_turn(e)], name)


async def reducer(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Dedupe `memory_entries_raw`; write `memory_entries` and both context renderings."""
    raw = list(state.get("memory_entries_raw") or [])
    entries = dedupe_entries(raw)
    name = character_display_name(state.get("character_id", ""))
    third, composer = render_contexts(entries, name)
    return {
        "memory_entries": entries,
        "memory_context": third,
        "memory_context_composer": composer,
        "_log": {"eingang": len(raw), "behalten": len(entries)},
    }
