"""Learnt phrasings, the second cross-check of a task classification
(docs/behaviour/agents.md#learnt-phrasings).

The classifier's model call is the recognition; the keyword hints and these phrasings are
independent checks of what it recognised (`konfidenz`). A phrasing is a word of the
person's own that stands for the action: of a task the agent *carried out*, the words of
the wording that the normalised form (the agent's domain language) and the target do not
contain, that are no filler word and no keyword already — "Hau die Milch von der Liste
runter" (normalised "remove_content: Milch von Notiz 'Einkaufsliste' entfernen") teaches
"hau" and "runter". Each carried-out task counts one use per word; once a word was used
`verb_mapping_uses` times for the same action, it is learnt: when it occurs again the
check counts that action as hinted, so an agreeing model is `hoch` instead of `niedrig`,
a disagreeing one `konflikt`. Before that, an agreeing word still being learnt makes an
otherwise unhinted check `mittel`.

Per person and bounded: at most `verb_mapping_cap` rows (the least recently used go), and
a phrasing unused for `verb_mapping_days` is forgotten. Learnt phrasings never enter the
classifier's prompt (a check that steered the model would check nothing).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from collections.abc import Mapping as MappingType
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from novaberg.store import verb_mappings
from novaberg.store.verb_mappings import Mapping

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

log = logging.getLogger(__name__)

__all__ = ["PHRASINGS_KEY", "Mapping", "learn_from_task", "matching_phrasings", "phrasings"]

WORD: Final = re.compile(r"[a-zäöüß]+")
MIN_LETTERS: Final = 3
PER_TASK_MAX: Final = 4
"""At most this many words of one task are counted (a long message teaches no more)."""

_FILLER_WORDS: Final = """
der die das den dem des ein eine einen einem einer eines und oder aber auch noch mal
bitte doch mir mich dir dich ihm ihr uns euch mein meine meinen meinem meiner dein deine
deinen sein seine von vom zum zur auf aus mit für fuer bei nach vor über ueber unter
ist sind bin bist war hast hat habe haben kannst kann könntest koenntest würdest
wuerdest du ich wir sie ihn nicht kein keine keinen schon jetzt gleich dann denn
eben halt ja nein okay also dass wenn weil the and for
"""
FILLER: Final = frozenset(_FILLER_WORDS.split())
"""Words that say nothing about an action."""

NOT_LEARNT: Final = frozenset({"rejected"})

PHRASINGS_KEY: Final = "woerter"
"""Task parameter: the phrasings of the classified wording, counted once the task is
carried out (kept with a pending question, so a confirmed task counts them too)."""


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def phrasings(
    wording: str, normalised: str, target: str, skip: Callable[[str], bool] = lambda _: False
) -> list[str]:
    """The words of `wording` that may stand for its action (see the module docstring);
    `skip`: words already covered otherwise (a keyword hint's own word)."""
    covered = f"{normalised} {target}".lower()
    found: list[str] = []
    for word in _words(wording):
        if len(word) < MIN_LETTERS or word in FILLER or word in covered or word in found:
            continue
        if skip(word):
            continue
        found.append(word)
        if len(found) == PER_TASK_MAX:
            break
    return found


def _now(deps: GraphDeps) -> datetime:
    return datetime.fromtimestamp(deps.clock(), UTC)


def _unused_since(deps: GraphDeps) -> datetime:
    return _now(deps) - timedelta(days=deps.settings.verb_mapping_days)


@dataclass(frozen=True, slots=True)
class Learnt:
    """What one carried-out task taught: the words counted and the rows forgotten."""

    words: list[str]
    forgotten: int = 0

    def as_log(self) -> dict[str, Any]:
        return {"woerter": list(self.words), "vergessen": self.forgotten}


async def learn_from_task(
    deps: GraphDeps, user_id: str, agent: str, parameter: MappingType[str, Any]
) -> Learnt | None:
    """Count the phrasings the classification found (`PHRASINGS_KEY` of the task's
    parameters) for its action (`aktion`); None when there is nothing to learn or the write
    failed (logged: a lost count never costs the task)."""
    action = str(parameter.get("aktion") or "")
    words = [str(word) for word in parameter.get(PHRASINGS_KEY) or []][:PER_TASK_MAX]
    if not user_id or not action or action in NOT_LEARNT or not words:
        return None
    try:
        async with deps.pool.connection() as conn:
            forgotten = await verb_mappings.record_uses(
                conn,
                user_id,
                agent,
                action,
                words,
                now=_now(deps),
                unused_since=_unused_since(deps),
                cap=deps.settings.verb_mapping_cap,
            )
    except Exception as exc:
        log.error("verb mappings of %s/%s not counted: %s", user_id, agent, exc)
        return None
    return Learnt(words, forgotten)


async def matching_phrasings(deps: GraphDeps, user_id: str, agent: str, task: str) -> list[Mapping]:
    """The person's phrasings for `agent` that occur (as whole words) in `task`, used at
    least once within `verb_mapping_days` (the caller tells learnt from still being
    learnt by `uses`); [] when none or the read failed (logged: the check is then the
    keywords' alone)."""
    words = set(_words(task))
    if not user_id or not words:
        return []
    try:
        async with deps.pool.connection() as conn:
            known = await verb_mappings.learnt(
                conn,
                user_id,
                agent,
                min_uses=1,
                unused_since=_unused_since(deps),
            )
    except Exception as exc:
        log.error("verb mappings of %s/%s not read: %s", user_id, agent, exc)
        return []
    return [mapping for mapping in known if mapping.expression in words]
