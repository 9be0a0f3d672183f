"""The gates between Nova's impulse stack and the user (docs/behaviour/pixie.md#gates).

Pure: `evaluate(snapshot)` checks every gate on what delivery read, records each with
its value and threshold, and picks the best entry. All gates are evaluated, so the log
shows every value, and the first closed one is the reason an impulse was held.

| gate | opens when |
|---|---|
| `impulse` | the person left impulses on |
| `pausiert` | the person has not paused the character |
| `ruhezeit` | the user's local time is outside the quiet hours |
| `tageslimit` | fewer impulses delivered today (user's zone) than allowed |
| `stapel` | the stack holds an entry |
| `ausloeser` | momentum is low, or the user has been silent ≥ NOVABERG_IMPULSE_SILENCE |
| `turn_laeuft` | no turn runs and no event waits for the pair |
| `rueckfrage` | no task agent's question is open (an impulse must not consume it) |
| `burst` | fewer than 2 impulses since the user last wrote |
| `naehe` | the stance's `naehe` ≥ 0.25 and the stance is ≤ 24 h old (absent: held) |
| `initiative` | Nova leads: the stance's initiative bit is 1 (a score: ≥ −0.05) |
| `stress` | the user's last emotion is not stress |
| `auswahl` | an entry has cos ≥ 0.30 to the user's last utterances (only `nachfragen` entries while the user's emotion is negative); best score 0.7·cos + 0.3·mode fit |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from novaberg.ei.canon import NEGATIVE, canonicalise, group_of, parse_number
from novaberg.impulses.settings import ImpulseSettings, in_quiet_hours, parse_quiet_hours
from novaberg.impulses.shadow_queue import TASK_FOLLOW_UP
from novaberg.impulses.stack import StackEntry, cosine

MAX_BURST: Final = 2
"""Impulses in a row without a reply from the user."""

MIN_CLOSENESS: Final = 0.25
"""Stance `naehe` an impulse needs."""

STANCE_MAX_AGE: Final = 86_400.0
"""A stance older than a day says nothing about now."""

INITIATIVE_THRESHOLD: Final = -0.05
"""A numeric initiative score at or above this lets Nova lead."""

MIN_COSINE: Final = 0.30
"""How close an entry must be to what the user last talked about."""

COSINE_WEIGHT: Final = 0.7
MODE_WEIGHT: Final = 0.3

STRESS: Final = "stress"

HELD_NO_STANCE: Final = "haltung fehlt"
"""The stance hash is absent (its node did not run for the pair): the gate holds."""

FIRED: Final = "gesendet"
HELD: Final = "gehalten"


@dataclass(frozen=True)
class Gate:
    """One gate as logged: name, the value seen, the threshold, open or not."""

    name: str
    value: Any
    threshold: Any
    open: bool

    def wire(self) -> dict[str, Any]:
        return {
            "tor": self.name,
            "wert": self.value,
            "schwelle": self.threshold,
            "offen": self.open,
        }


@dataclass(frozen=True)
class Snapshot:
    """What delivery read about one pair at `now` (epoch seconds)."""

    now: float
    settings: ImpulseSettings
    delivered_today: int
    stack: Sequence[StackEntry]
    silence_needed: float
    waiting: int = 0
    """Entries left out of `stack` while they back off after a failed delivery."""
    last_activity: float | None = None
    momentum: str | None = None
    turn_running: bool = False
    events_waiting: bool = False
    pending_question: bool = False
    paused: bool = False
    """The person paused the character: it says nothing, not even on its own."""
    burst: int = 0
    stance: Mapping[str, str] | None = None
    user_emotion: str | None = None
    user_mode: str | None = None
    reference: Sequence[float] | None = None


@dataclass(frozen=True)
class Decision:
    gates: list[Gate]
    entry: StackEntry | None = None
    score: float | None = None
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def fired(self) -> bool:
        return self.entry is not None and all(g.open for g in self.gates)

    @property
    def reason(self) -> str:
        for gate in self.gates:
            if not gate.open:
                return f"{gate.name}: {gate.value}"
        return f"{FIRED}: {self.entry.aufgabe if self.entry else '-'}"

    def wire(self) -> list[dict[str, Any]]:
        return [g.wire() for g in self.gates]


def mode_fit(entry_mode: str | None, user_mode: str | None) -> float:
    """1 for the same conversation mode, 0.5 when either is unknown, else 0."""
    if not entry_mode or not user_mode:
        return 0.5
    return 1.0 if entry_mode == user_mode else 0.0


def _stance_gates(stance: Mapping[str, str] | None, now: float) -> list[Gate]:
    if not stance:
        return [
            Gate("naehe", HELD_NO_STANCE, MIN_CLOSENESS, False),
            Gate("initiative", HELD_NO_STANCE, INITIATIVE_THRESHOLD, False),
        ]
    closeness = parse_number(stance.get("naehe"))
    computed = str(stance.get("gerechnet", "1")) != "0"
    stamp = parse_number(stance.get("zeit"))
    age = None if stamp is None else round(now - stamp, 1)
    fresh = age is not None and age <= STANCE_MAX_AGE
    if not computed:
        closeness_gate = Gate("naehe", "haltung nicht gerechnet", MIN_CLOSENESS, False)
    elif not fresh:
        closeness_gate = Gate("naehe", f"haltung alt ({age} s)", MIN_CLOSENESS, False)
    else:
        closeness_gate = Gate(
            "naehe", closeness, MIN_CLOSENESS, closeness is not None and closeness >= MIN_CLOSENESS
        )
    raw = str(stance.get("initiative", "")).strip()
    if raw in {"0", "1"}:
        initiative_gate = Gate("initiative", int(raw), 1, raw == "1")
    else:
        score = parse_number(raw)
        initiative_gate = Gate(
            "initiative",
            score if score is not None else "fehlt",
            INITIATIVE_THRESHOLD,
            score is not None and score >= INITIATIVE_THRESHOLD,
        )
    return [closeness_gate, initiative_gate]


def choose(
    stack: Sequence[StackEntry],
    reference: Sequence[float] | None,
    user_emotion: str | None,
    user_mode: str | None,
) -> tuple[StackEntry | None, float | None, dict[str, float], str]:
    """The best entry, its score, every candidate's score, and a note on the filter."""
    negative = group_of(user_emotion) == NEGATIVE
    pool = [e for e in stack if e.aufgabe == TASK_FOLLOW_UP] if negative else list(stack)
    note = "nur nachfragen (emotion negativ)" if negative else "alle"
    if not reference:
        return None, None, {}, "kein bezug (keine äußerung mit embedding)"
    if not pool:
        return None, None, {}, f"{note}; kein solcher eintrag"
    scores: dict[str, float] = {}
    best: tuple[float, StackEntry] | None = None
    for entry in pool:
        similarity = cosine(entry.embedding, reference)
        if similarity is None or similarity < MIN_COSINE:
            continue
        score = round(
            COSINE_WEIGHT * similarity + MODE_WEIGHT * mode_fit(entry.modus, user_mode), 4
        )
        scores[entry.id] = score
        if best is None or score > best[0]:
            best = (score, entry)
    if best is None:
        return None, None, scores, f"{note}; keiner mit cos ≥ {MIN_COSINE}"
    return best[1], best[0], scores, note


def evaluate(snap: Snapshot) -> Decision:
    """Every gate with its value; the chosen entry when all are open."""
    settings = snap.settings
    local = datetime.fromtimestamp(snap.now, UTC).astimezone(settings.zone)
    quiet = parse_quiet_hours(settings.quiet_hours)
    silence = None if snap.last_activity is None else round(snap.now - snap.last_activity, 1)
    silent_enough = silence is None or silence >= snap.silence_needed
    low = snap.momentum == "low"
    emotion = canonicalise(snap.user_emotion) if snap.user_emotion else None
    entry, score, scores, note = choose(
        snap.stack, snap.reference, snap.user_emotion, snap.user_mode
    )
    gates = [
        Gate("impulse", settings.enabled, True, settings.enabled),
        Gate("pausiert", snap.paused, False, not snap.paused),
        Gate(
            "ruhezeit",
            f"{local:%H:%M} {settings.timezone}",
            settings.quiet_hours or "keine",
            not in_quiet_hours(quiet, local),
        ),
        Gate(
            "tageslimit",
            snap.delivered_today,
            settings.per_day,
            snap.delivered_today < settings.per_day,
        ),
        Gate(
            "stapel",
            len(snap.stack)
            if not snap.waiting
            else {"eintraege": len(snap.stack), "warten_nach_fehler": snap.waiting},
            1,
            len(snap.stack) >= 1,
        ),
        Gate(
            "ausloeser",
            {
                "stille_s": "unbekannt (> 2 h)" if silence is None else silence,
                "momentum": snap.momentum,
            },
            {"stille_s": snap.silence_needed, "momentum": "low"},
            silent_enough or low,
        ),
        Gate(
            "turn_laeuft",
            {"turn": snap.turn_running, "ereignis_wartet": snap.events_waiting},
            False,
            not snap.turn_running and not snap.events_waiting,
        ),
        Gate("rueckfrage", snap.pending_question, False, not snap.pending_question),
        Gate("burst", snap.burst, MAX_BURST, snap.burst < MAX_BURST),
        *_stance_gates(snap.stance, snap.now),
        Gate("stress", emotion, f"nicht {STRESS}", emotion != STRESS),
        Gate(
            "auswahl",
            {
                "bester": score,
                "eintrag": entry.id if entry else None,
                "filter": note,
                "scores": scores,
            },
            {"cos": MIN_COSINE, "score": "0.7·cos + 0.3·modus"},
            entry is not None,
        ),
    ]
    return Decision(gates, entry if all(g.open for g in gates) else None, score, scores)
