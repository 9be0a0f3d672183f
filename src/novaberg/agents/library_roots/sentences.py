"""What the library-roots agent tells the person, in her words (German, like every
user-facing text): the question, what was done, and why a folder was refused.

Why here and not in the roots service: the service's messages are for the operator's
command line and log (English, with setting names); the person gets a sentence that says
what to do instead, never a code or an exception text. Every `Refusal` has one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from novaberg.memory.library.roots import Refusal

_HOME: Final = Path(os.path.expanduser("~"))


def shown(path: str | Path) -> str:
    """A path as the person reads it: below the home folder as `~/…`."""
    real = Path(path)
    if real == _HOME:
        return "~"
    if _HOME in real.parents:
        return "~/" + str(real.relative_to(_HOME))
    return str(real)


def files(count: int) -> str:
    return "eine Datei" if count == 1 else f"{count} Dateien"


def question(folder: Path, count: int) -> str:
    """The ask-back: the real folder and how many files of it the library would read."""
    inside = (
        "Darin liegt noch keine Datei, die ich lesen kann (neue lese ich dann mit)."
        if count == 0
        else f"Darin liegen {files(count)}, die ich lesen kann."
    )
    return f"Darf ich deinen Ordner {shown(folder)} lesen? {inside}"


def approved(folder: Path, count: int) -> str:
    return (
        f"Ordner {shown(folder)} freigegeben; {files(count)} darin werden jetzt im "
        "Hintergrund eingelesen."
        if count
        else f"Ordner {shown(folder)} freigegeben; neue Dateien darin lese ich mit."
    )


def already_approved(folder: Path) -> str:
    return f"Den Ordner {shown(folder)} darf ich schon lesen; nichts geändert."


def revoked(folder: str, passages: int) -> str:
    forgotten = "einen Abschnitt" if passages == 1 else f"{passages} Abschnitte"
    return f"Ordner {shown(folder)} nicht mehr freigegeben; {forgotten} daraus vergessen."


def changed_meanwhile(folder: Path) -> str:
    return (
        f"{shown(folder)} zeigt inzwischen auf einen anderen Ordner als bei meiner Frage; "
        "freigegeben habe ich nichts. Sag es bitte noch einmal."
    )


def refusal(reason: Refusal, path: str, *, offered: Iterable[Path] = (), limit: int = 0) -> str:
    """Why `path` (as the person wrote it) cannot be approved or revoked."""
    where = ", ".join(shown(folder) for folder in offered)
    sentences = {
        Refusal.MISSING: f"Einen Ordner {path} finde ich nicht.",
        Refusal.NOT_A_FOLDER: f"{path} ist kein Ordner; freigeben kannst du mir nur Ordner.",
        Refusal.SYSTEM_FOLDER: (
            f"{path} ist ein Systemordner; der gehört nicht in meine Bibliothek."
        ),
        Refusal.TOO_MANY_FILES: (
            f"In {path} liegen mehr als {limit} Dateien, die ich lesen könnte, zu viele für "
            "einen Ordner. Gib mir besser einen kleineren Ordner darin frei."
        ),
        Refusal.OPERATOR_ONLY: (
            "Ordner gibt hier nur der Betreiber des Servers frei; im Chat kann ich keinen annehmen."
        ),
        Refusal.DATA_HOME: (
            f"{path} enthält meine eigenen Daten; diesen Ordner lese ich nicht als Bibliothek."
        ),
        Refusal.NOT_OFFERED: (
            f"{path} liegt außerhalb der Ordner, die ich hier lesen darf"
            + (f" (freigeben kannst du Ordner in {where})." if where else ".")
        ),
        Refusal.OVERLAPS_OWN: (
            f"{path} überschneidet sich mit einem Ordner, den ich schon lesen darf; nimm "
            "erst den anderen zurück."
        ),
        Refusal.OVERLAPS_OTHER: (
            f"{path} überschneidet sich mit dem Ordner einer anderen Person; den kann ich "
            "für dich nicht freigeben."
        ),
        Refusal.NOT_APPROVED: f"{path} hast du mir nicht freigegeben; da gibt es nichts zurückzunehmen.",
    }
    return sentences[reason]
