"""The error codes a person can meet on the page, each as one German sentence.

An error answer keeps its machine `fehler` code and its technical `detail` (for scripts and
logs) and gains `meldung`: what the page shows the person — a sentence that says what
happened and what to do, never a raw code or an English byte count. One table, so a later
language catalogue can take it over whole (docs/behaviour/web.md#errors-in-words).
"""

from __future__ import annotations

from typing import Any, Final

from novaberg.events.model import MAX_PROMPT_BYTES

FIELD_SENTENCE: Final = "meldung"
"""The wire field of the sentence, next to `fehler` and `detail`."""

SENTENCES: Final[dict[str, str]] = {
    "token_fehlt": "Ohne Schlüssel geht es nicht. Bitte gib deinen Schlüssel ein.",
    "token_ungueltig": (
        "Der Schlüssel wurde nicht angenommen. Prüfe ihn; einen neuen gibt auf dem "
        "Server der Befehl „novaberg user add NAME“."
    ),
    "text_zu_lang": (
        f"Die Nachricht ist zu lang: höchstens {MAX_PROMPT_BYTES // 1024} KiB "
        f"({MAX_PROMPT_BYTES:_} Bytes) gehen auf einmal. Kürze sie oder teile sie auf."
    ).replace("_", "."),  # German thousands separator
    "zu_gross": "Das ist zu groß für eine Anfrage. Bitte kürzer oder in Teilen.",
    "zu_viele_anfragen": (
        "Zu viele Nachrichten auf einmal. Warte einen Moment und sende dann noch einmal."
    ),
    "text_leer": "Die Nachricht ist leer.",
    "text_ungueltig": "Die Nachricht enthält ein Zeichen, das nicht gesendet werden kann.",
    "utf8_ungueltig": "Die Nachricht enthält ungültige Zeichen.",
    "json_ungueltig": "Die Anfrage war nicht lesbar. Bitte lade die Seite neu.",
    "eingabe_ungueltig": "Die Anfrage war unvollständig. Bitte lade die Seite neu.",
    "zu_tief": "Die Anfrage ist zu verschachtelt, um sie zu lesen.",
    "export_laeuft": (
        "Deine Daten werden gerade schon zusammengestellt. Warte, bis dieser Download "
        "fertig ist, und versuche es dann noch einmal."
    ),
    "zeitueberschreitung": "Die Nachricht kam nicht rechtzeitig an. Bitte noch einmal senden.",
    "charakter_unbekannt": "Diesen Charakter gibt es nicht (mehr). Wähle einen anderen.",
    "nicht_gefunden": "Das gibt es nicht (mehr).",
    "nicht_bereit": "Der Server startet noch. Versuch es gleich noch einmal.",
    "speicher_nicht_erreichbar": (
        "Der Server kann gerade nichts speichern; die Nachricht wurde nicht angenommen. "
        "Bitte gleich noch einmal."
    ),
    "modell_nicht_erreichbar": "Das Sprachmodell ist gerade nicht erreichbar.",
    "interner_fehler": "Auf dem Server ist etwas schiefgegangen; nichts wurde angenommen.",
}


def with_sentence(detail: dict[str, Any]) -> dict[str, Any]:
    """`detail` (`{"fehler", "detail"}`) with its `meldung` added when the code has one."""
    sentence = SENTENCES.get(str(detail.get("fehler")))
    if sentence is None or FIELD_SENTENCE in detail:
        return detail
    return {**detail, FIELD_SENTENCE: sentence}
