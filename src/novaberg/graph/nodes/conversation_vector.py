"""Conversation-vector node ("GV-Node", docs/behaviour/nodes.md#conversation-vector).

Forms the turn's hypothesis of where the conversation is heading — a few lines the
responder reads as `gespraechsvektor`. How far Nova thinks ahead (the *length*, 0–3 jumps)
follows from the counterpart's state:

    start 1; positive emotion +0.5 + 0.5·a, negative −0.5·a; vertrauen +0.5, distanz −0.5;
    + mode delta; locker +0.3, formell −0.2; crisis (spirale/absturz with a ≥ 0.7) → 0.

Length 0 makes no call. Length ≥ 1 makes one free-text call; from length 2 the answer is
asked in lines `SPRUNG 1..n`, `ABSICHT`, `STRATEGIE`, `VEHIKEL`, `IMPULS`. Intents
begruessung|meta|system skip the thinking ahead altogether.

On every path it also reads the situation and the open questions (`graph/curiosity.py`):
the turn's knowledge gaps (`wissensluecken`), the colour mix of the two moods (`farbton`)
and the curiosity they give (`neugier`, with its shares; the goal boost from the gaps'
closeness to the activated goals). These are for the log and the stored `gv:detail`, not
for a prompt.

The landscape (six axes → 64 sectors → 14 clusters, initiative; `ei/landscape.py`) is
computed first, on every path and without a model: it needs only the counterpart's
perception and Nova's register. `gv_detail` carries `cluster`, `achsen`, `sektor`,
`initiative` and every other key on every path. The prompt gets the long-term resonance
the enricher laid (`lzg_resonanz`) as `[RESONANZ]`. `vorausdenken` ∈ gelaufen | skip | krise | laenge_null,
plus `ausfall` when the call failed (a failure must not look like a hypothesis that happened
to be empty).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.config import Profile, Role
from novaberg.ei.canon import NEGATIVE, POSITIVE, group_of
from novaberg.ei.landscape import Landscape, LandscapeInput, intentions_tuple, landscape
from novaberg.graph.curiosity import understanding
from novaberg.graph.personality import Emotion, InternalPersonality
from novaberg.graph.state import ConversationState
from novaberg.graph.turn_head import head_of, with_head
from novaberg.llm.errors import ModelError, ModelUnavailable
from novaberg.prompts import render

log = logging.getLogger(__name__)

LENGTH_START: Final = 1.0
LENGTH_MIN: Final = 0
LENGTH_MAX: Final = 3
POSITIVE_BASE: Final = 0.5
POSITIVE_PER_AROUSAL: Final = 0.5
NEGATIVE_PER_AROUSAL: Final = 0.5
DYNAMIC_DELTA: Final[Mapping[str, float]] = {"vertrauen": 0.5, "distanz": -0.5}
STYLE_DELTA: Final[Mapping[str, float]] = {"locker": 0.3, "formell": -0.2}
CRISIS_VECTORS: Final = frozenset({"spirale", "absturz"})
CRISIS_AROUSAL: Final = 0.7
"""The length rule."""

MODE_DELTA: Final[Mapping[str, float]] = {
    "philosophischer_austausch": 0.5,
    "fachgespraech": 0.3,
    "lernmodus": 0.3,
    "beratend": 0.3,
    "kreativ": 0.3,
    "spielerisch": 0.2,
    "emotional": 0.0,
    "alltag": 0.0,
    "berichtend": -0.2,
    "arbeitsmodus": -0.3,
}
"""Assumed values: modes that invite thinking along (philosophy, teaching, advice,
creativity) lengthen, task-like modes (work, reporting) shorten. Unknown modes add 0."""

SKIP_INTENTS: Final = frozenset({"begruessung", "meta", "system"})
"""Intents that need no thinking ahead."""

GV_TEMPERATURE: Final = 0.4
"""A little freedom for a hypothesis."""

GV_MAX_TOKENS: Final = 200
"""A hypothesis is a few lines; the cap keeps the small local model from rambling."""

COMPACT_LENGTH_MAX: Final = 1
"""The compact profile thinks one step ahead at most: the one-sentence form. A small model
asked for 2–3 jumps writes up to eight lines (SPRUNG…IMPULS) before the responder may
start, and the responder reads them as one block anyway (docs/behaviour/llm.md#profiles)."""

GV_MAX_CHARS: Final = 800
"""Cap on the hypothesis the responder reads (the bundled model's 2048-token context,
docs/behaviour/llm.md#local-model)."""

RAN: Final = "gelaufen"
SKIPPED: Final = "skip"
CRISIS: Final = "krise"
LENGTH_ZERO: Final = "laenge_null"
FAILED: Final = "ausfall"
"""`gv_detail["vorausdenken"]` values."""

_LINE_KEYS: Final = {
    "ABSICHT": "absicht",
    "STRATEGIE": "strategie",
    "VEHIKEL": "vehikel",
    "IMPULS": "impuls",
}
_SPRUNG = re.compile(r"^\s*SPRUNG\s*(\d+)\s*[:.\-]?\s*(.*)$", re.IGNORECASE)
_KEYED = re.compile(r"^\s*(ABSICHT|STRATEGIE|VEHIKEL|IMPULS)\s*[:.\-]?\s*(.*)$", re.IGNORECASE)


def raw_length(emotion: Emotion) -> float:
    """The unrounded length before clamping (crisis handled by `is_crisis`)."""
    arousal = emotion.arousal
    value = LENGTH_START
    group = group_of(emotion.emotion)
    if group == POSITIVE:
        value += POSITIVE_BASE + POSITIVE_PER_AROUSAL * arousal
    elif group == NEGATIVE:
        value -= NEGATIVE_PER_AROUSAL * arousal
    value += DYNAMIC_DELTA.get(emotion.relationship_dynamic, 0.0)
    value += MODE_DELTA.get(emotion.mode, 0.0)
    value += STYLE_DELTA.get(emotion.language_style, 0.0)
    return value


def is_crisis(emotion: Emotion) -> bool:
    """spirale/absturz at arousal ≥ 0.7: no thinking ahead, just be there."""
    return emotion.emotions_vector in CRISIS_VECTORS and emotion.arousal >= CRISIS_AROUSAL


def length_of(emotion: Emotion) -> int:
    """The length 0–3 (half rounds up)."""
    if is_crisis(emotion):
        return 0
    value = math.floor(raw_length(emotion) + 0.5)
    return max(LENGTH_MIN, min(LENGTH_MAX, value))


def parse_lines(text: str) -> dict[str, Any]:
    """SPRUNG/ABSICHT/STRATEGIE/VEHIKEL/IMPULS lines of a length ≥ 2 answer."""
    parsed: dict[str, Any] = {
        "spruenge": [],
        "absicht": "",
        "strategie": "",
        "vehikel": "",
        "impuls": "",
    }
    for line in text.splitlines():
        jump = _SPRUNG.match(line)
        if jump:
            parsed["spruenge"].append(jump.group(2).strip())
            continue
        keyed = _KEYED.match(line)
        if keyed:
            parsed[_LINE_KEYS[keyed.group(1).upper()]] = keyed.group(2).strip()
    return parsed


def empty_detail(
    length: int, raw: float, intent: str, mode: str, land: Landscape | None = None
) -> dict[str, Any]:
    """gv_detail with every key (filled in by the path taken)."""
    detail: dict[str, Any] = {
        "laenge": length,
        "laenge_roh": round(raw, 3),
        "vorausdenken": mode,
        "intent": intent,
        "spruenge": [],
        "absicht": "",
        "strategie": "",
        "vehikel": "",
        "impuls": "",
        "cluster": None,
        "achsen": {},
        "sektor": None,
        "initiative_wert": None,
        "initiative": None,
        "ausfall": None,
        "farbton": {},
        "wissensluecken": [],
        "neugier": None,
        "neugier_anteile": {},
        "neugier_ausfall": None,
    }
    if land is not None:
        detail.update(land.as_detail())
    return detail


def landscape_of(state: ConversationState) -> Landscape:
    """The turn's landscape from the counterpart's perception and Nova's register."""
    emotion = _counterpart_emotion(state)
    internal = state.get("internal")
    register = internal.register if isinstance(internal, InternalPersonality) else None
    return landscape(
        LandscapeInput(
            arousal=emotion.arousal,
            emotion=emotion.emotion,
            relationship_dynamic=emotion.relationship_dynamic,
            intent=emotion.intent,
            closeness=register.closeness if register is not None else 0.5,
            depth=register.depth if register is not None else 0.3,
            conflict=bool(state.get("nova_emotion_conflict")),
            intentions=intentions_tuple(state.get("user_intentions")),
        )
    )


RESONANCE_MEMORIES: Final = 3
RESONANCE_CHARS: Final = 160


def resonance_text(resonance: Mapping[str, Any] | None) -> str:
    """The `[RESONANZ]` lines: what the long-term spreading read brought up."""
    memories = (resonance or {}).get("erinnerungen") or []
    lines = []
    for memory in memories[:RESONANCE_MEMORIES]:
        text = " ".join(str(memory.get("inhalt") or "").split())[:RESONANCE_CHARS]
        if text:
            lines.append(f"- {text}")
    return "\n".join(lines)


def _counterpart_emotion(state: ConversationState) -> Emotion:
    emotion = getattr(state.get("external"), "emotion", None)
    return emotion if isinstance(emotion, Emotion) else Emotion()


async def conversation_vector(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Write `gespraechsvektor` and `gv_detail` (every key, every path)."""
    emotion = _counterpart_emotion(state)
    intent = emotion.intent
    raw = raw_length(emotion)
    land = landscape_of(state)
    understood = await understanding(state, deps, crisis=is_crisis(emotion))
    seen = _understanding_log(understood)
    if intent in SKIP_INTENTS:
        detail = {**empty_detail(0, raw, intent, SKIPPED, land), **understood}
        return {
            "conversation_hypothesis": "",
            "hypothesis_detail": detail,
            "_log": {"vorausdenken": SKIPPED, "cluster": land.cluster, **seen},
        }
    length = length_of(emotion)
    if deps.settings.turn_profile is Profile.COMPACT:
        length = min(length, COMPACT_LENGTH_MAX)
    if length == 0:
        why = CRISIS if is_crisis(emotion) else LENGTH_ZERO
        detail = {**empty_detail(0, raw, intent, why, land), **understood}
        return {
            "conversation_hypothesis": "",
            "hypothesis_detail": detail,
            "_log": {"vorausdenken": why, "cluster": land.cluster, **seen},
        }
    detail = {**empty_detail(length, raw, intent, RAN, land), **understood}
    prompt = render(
        "conversation_vector",
        variant="lang" if length >= 2 else "kurz",
        stimmung=f"{emotion.emotion} (Erregung {emotion.arousal:.2f}), Modus {emotion.mode}",
        laenge=str(length),
        resonanz=resonance_text(state.get("long_term_resonance")),
    )
    try:
        text = (
            await deps.model.chat(
                Role.ANALYSIS,
                with_head(head_of(state, deps), prompt),
                temperature=GV_TEMPERATURE,
                max_tokens=GV_MAX_TOKENS,
            )
        ).strip()
    except ModelUnavailable:
        raise  # the model cannot be used: the turn fails (events.outcomes)
    except ModelError as exc:
        log.warning("conversation_vector: call failed (%s); no hypothesis", exc)
        detail.update(vorausdenken=FAILED, ausfall=type(exc).__name__)
        return {
            "conversation_hypothesis": "",
            "hypothesis_detail": detail,
            "_log": {"vorausdenken": FAILED, **seen},
        }
    if not text:
        detail.update(vorausdenken=FAILED, ausfall="leer")
        return {
            "conversation_hypothesis": "",
            "hypothesis_detail": detail,
            "_log": {"vorausdenken": FAILED, **seen},
        }
    text = text[:GV_MAX_CHARS]
    if length >= 2:
        detail.update(parse_lines(text))
    return {
        "conversation_hypothesis": text,
        "hypothesis_detail": detail,
        "_log": {"vorausdenken": RAN, "laenge": length, "cluster": land.cluster, **seen},
    }


def _understanding_log(understood: Mapping[str, Any]) -> dict[str, Any]:
    """The node's log row shows curiosity, its shares, the gaps and the hue."""
    return {
        "neugier": understood["neugier"],
        "neugier_anteile": understood["neugier_anteile"],
        "wissensluecken": [gap["frage"] for gap in understood["wissensluecken"]],
        "farbton": understood["farbton"],
        "neugier_ausfall": understood["neugier_ausfall"],
    }
