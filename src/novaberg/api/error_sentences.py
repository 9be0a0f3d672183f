"""The error codes a person can meet, each as one sentence in German and in English.

An error answer keeps its machine `fehler` code and its technical `detail` (for scripts and
logs) and gains `meldung`: what the page shows the person — a sentence that says what
happened and what to do, never a raw code or an English byte count. The language is the
request's (`Accept-Language`, German when absent; api/request_language.py). A turn that
ended without an answer names its reason as a code too (`grund`, events/outcomes.py); the
terminal chat says it with `failure_sentence` (the page has the same sentences in its
catalogues). Docs: docs/behaviour/web.md#errors-in-words and #language.
"""

from __future__ import annotations

from typing import Any, Final

from novaberg.api.request_language import current_language
from novaberg.events import outcomes
from novaberg.events.model import MAX_PROMPT_BYTES

FIELD_SENTENCE: Final = "meldung"
"""The wire field of the sentence, next to `fehler` and `detail`."""

_KIB = MAX_PROMPT_BYTES // 1024

SENTENCES: Final[dict[str, str]] = {
    "token_fehlt": "Ohne Schlüssel geht es nicht. Bitte gib deinen Schlüssel ein.",
    "token_ungueltig": (
        "Der Schlüssel wurde nicht angenommen. Prüfe ihn; einen neuen gibt auf dem "
        "Server der Befehl „novaberg user add NAME“."
    ),
    "text_zu_lang": (
        f"Die Nachricht ist zu lang: höchstens {_KIB} KiB "
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
    "chat_unbekannt": "Diesen Chat gibt es nicht (mehr). Wähle einen aus der Liste.",
    "nicht_gefunden": "Das gibt es nicht (mehr).",
    "unbekannter_character": "Diesen Charakter gibt es nicht (mehr). Wähle einen anderen.",
    "character_geteilt": (
        "Dieser Charakter ist eingebaut und kann nicht geändert werden. Lege eine Kopie an."
    ),
    "feld_ungueltig": "Ein Feld ist leer oder zu lang. Prüfe den Namen und die Texte.",
    "bild_ungueltig": "Das Bild geht nicht: bitte ein PNG, JPEG oder WebP bis 512 KiB.",
    "character_vorhanden": "Einen Charakter mit diesem Namen gibt es schon. Wähle einen anderen.",
    "zu_viele_charaktere": "Du hast schon so viele Charaktere, wie erlaubt sind. Lösche erst einen.",
    "nicht_bereit": "Der Server startet noch. Versuch es gleich noch einmal.",
    "speicher_nicht_erreichbar": (
        "Der Server kann gerade nichts speichern; die Nachricht wurde nicht angenommen. "
        "Bitte gleich noch einmal."
    ),
    "modell_nicht_erreichbar": "Das Sprachmodell ist gerade nicht erreichbar.",
    "interner_fehler": "Auf dem Server ist etwas schiefgegangen; nichts wurde angenommen.",
    "client_id_ungueltig": "Die Seite hat sich falsch ausgewiesen. Bitte lade sie neu.",
    "limit_erreicht": "Hier ist kein Platz mehr. Archiviere oder lösche zuerst etwas.",
    "archiviert": "Das ist archiviert und kann so nicht mehr geändert werden.",
    "inaktiv": "Diese Anweisung ist abgeschaltet. Schalte sie zuerst wieder ein.",
    "zu_viele_anweisungen": "Es gibt schon zu viele Anweisungen. Entferne zuerst eine.",
    "laeuft_bereits": "Das wird gerade schon eingelesen. Warte, bis es fertig ist.",
    "ordner_abgelehnt": "Dieser Ordner kann nicht freigegeben werden.",
    "unbekannter_turn": "Zu dieser Antwort gibt es keinen Ablauf (mehr).",
    "kein_avatar": "Dieser Charakter hat kein Bild.",
    "keine_karte": "Das ist keine lesbare Charakterkarte (PNG oder JSON).",
    "kein_chat": "Das ist kein lesbarer Chatverlauf.",
    "archiv_voll": "Das Archiv ist voll; nichts wurde importiert.",
    "import_laeuft": "Ein Import läuft noch. Versuch es gleich noch einmal.",
    "nur_betreiber": (
        "Die Modellverbindung gilt für die ganze Installation; nur ihr Betreiber darf sie "
        "prüfen oder ändern."
    ),
    "url_ungueltig": "Die Adresse ist keine http(s)-Adresse mit Servernamen.",
    "verbindung_fehlgeschlagen": (
        "Das Modell hat auf die Probe nicht richtig geantwortet; die bisherige Verbindung bleibt."
    ),
    # message controls (api/turns_api.py)
    "turn_laeuft": "Gerade entsteht noch eine Antwort. Warte sie ab oder halte sie an.",
    "nichts_zu_erneuern": "Auf die letzte Nachricht gibt es noch keine Antwort zum Erneuern.",
    "nicht_die_letzte": "Nur die letzte Nachricht und die letzte Antwort lassen sich ändern.",
    "nicht_erneuerbar": "Diese Antwort ist zu alt, um sie neu schreiben zu lassen.",
    "agent_handelte": (
        "In dieser Antwort wurde schon etwas erledigt; eine neue würde es doppelt tun."
    ),
    "zu_viele_varianten": "Mehr als zehn Antworten auf eine Nachricht gehen nicht.",
    "variante_unbekannt": "Diese Antwort gibt es nicht (mehr).",
    "turn_unbekannt": "Zu dieser Antwort gibt es keine anderen Fassungen.",
    "nachricht_unbekannt": "Diese Nachricht gibt es nicht (mehr).",
    "kein_turn": "Gerade läuft nichts, das sich anhalten ließe.",
}
"""German, the default (also what a client that names no language reads)."""

SENTENCES_EN: Final[dict[str, str]] = {
    "token_fehlt": "Nothing works without a key. Please enter your key.",
    "token_ungueltig": (
        "The key was not accepted. Check it; the command “novaberg user add NAME” on the "
        "server gives you a new one."
    ),
    "text_zu_lang": (
        f"The message is too long: at most {_KIB} KiB ({MAX_PROMPT_BYTES:,} bytes) can be "
        "sent at once. Shorten it or split it up."
    ),
    "zu_gross": "That is too big for one request. Please send less, or in parts.",
    "zu_viele_anfragen": "Too many messages at once. Wait a moment, then send again.",
    "text_leer": "The message is empty.",
    "text_ungueltig": "The message contains a character that cannot be sent.",
    "utf8_ungueltig": "The message contains invalid characters.",
    "json_ungueltig": "The request could not be read. Please reload the page.",
    "eingabe_ungueltig": "The request was incomplete. Please reload the page.",
    "zu_tief": "The request is nested too deeply to be read.",
    "zeitueberschreitung": "The message did not arrive in time. Please send it again.",
    "charakter_unbekannt": "This character does not exist (any more). Choose another one.",
    "nicht_gefunden": "That does not exist (any more).",
    "nicht_bereit": "The server is still starting. Try again in a moment.",
    "speicher_nicht_erreichbar": (
        "The server cannot store anything right now; the message was not accepted. "
        "Please try again in a moment."
    ),
    "modell_nicht_erreichbar": "The language model cannot be reached right now.",
    "interner_fehler": "Something went wrong on the server; nothing was accepted.",
    "client_id_ungueltig": "The page identified itself wrongly. Please reload it.",
    "limit_erreicht": "There is no room left here. Archive or delete something first.",
    "archiviert": "This is archived and can no longer be changed this way.",
    "inaktiv": "This instruction is switched off. Switch it on again first.",
    "zu_viele_anweisungen": "There are too many instructions already. Remove one first.",
    "laeuft_bereits": "This is being read right now. Wait until it has finished.",
    "ordner_abgelehnt": "This folder cannot be approved.",
    "unbekannter_turn": "There are no steps (any more) for this answer.",
    "kein_avatar": "This character has no picture.",
    "unbekannter_character": "This character does not exist (any more). Choose another one.",
    "chat_unbekannt": "This chat does not exist (any more). Choose one from the list.",
    "character_geteilt": "This character is built in and cannot be changed. Make a copy.",
    "feld_ungueltig": "A field is empty or too long. Check the name and the texts.",
    "bild_ungueltig": "That picture does not work: please a PNG, JPEG or WebP up to 512 KiB.",
    "keine_karte": "This is not a readable character card (PNG or JSON).",
    "character_vorhanden": "A character with this name exists already. Choose another name.",
    "zu_viele_charaktere": "You already have as many characters as allowed. Delete one first.",
    "export_laeuft": (
        "Your data is being put together already. Wait until that download has finished, "
        "then try again."
    ),
    "nur_betreiber": (
        "The model connection applies to the whole installation; only its operator may test "
        "or change it."
    ),
    "url_ungueltig": "The address is not an http(s) address with a server name.",
    "verbindung_fehlgeschlagen": (
        "The model did not answer the probe properly; the current connection stays."
    ),
    # message controls (api/turns_api.py)
    "turn_laeuft": "An answer is still being written. Wait for it or stop it.",
    "nichts_zu_erneuern": "There is no answer to the last message yet that could be renewed.",
    "nicht_die_letzte": "Only the last message and the last answer can be changed.",
    "nicht_erneuerbar": "This answer is too old to be written anew.",
    "agent_handelte": ("Something was already done in this answer; a new one would do it twice."),
    "zu_viele_varianten": "More than ten answers to one message are not possible.",
    "variante_unbekannt": "This answer does not exist (any more).",
    "turn_unbekannt": "There are no other versions of this answer.",
    "nachricht_unbekannt": "This message does not exist (any more).",
    "kein_turn": "Nothing is running right now that could be stopped.",
    "kein_chat": "This is not a readable chat history.",
    "archiv_voll": "The archive is full; nothing was imported.",
    "import_laeuft": "An import is still running. Try again in a moment.",
}

BY_LANGUAGE: Final[dict[str, dict[str, str]]] = {"de": SENTENCES, "en": SENTENCES_EN}


def sentence(code: str, language: str | None = None) -> str | None:
    """The sentence for `code` in `language` (default: the current request's), or None."""
    table = BY_LANGUAGE.get(language or current_language(), SENTENCES)
    return table.get(code)


def with_sentence(detail: dict[str, Any]) -> dict[str, Any]:
    """`detail` (`{"fehler", "detail"}`) with its `meldung` added when the code has one, in
    the language of the request being answered."""
    said = sentence(str(detail.get("fehler")))
    if said is None or FIELD_SENTENCE in detail:
        return detail
    return {**detail, FIELD_SENTENCE: said}


FAILURES: Final[dict[str, str]] = {
    outcomes.GATE_TIMEOUT: "Es war gerade zu viel los; bitte noch einmal senden.",
    outcomes.MODEL_TIMEOUT: "Das Sprachmodell hat zu lange gebraucht.",
    outcomes.MODEL_OUTPUT: "Die Antwort des Sprachmodells war nicht lesbar.",
    outcomes.MODEL_UNAVAILABLE: "Das Sprachmodell war nicht erreichbar.",
    outcomes.MODEL_CONTEXT: "Das Gespräch war zu lang für das Sprachmodell.",
    outcomes.NO_ANSWER: "Es kam keine Antwort zustande.",
    outcomes.WORKER_DIED: "Der Server wurde unterbrochen.",
    outcomes.WORKER_STOPPED: "Der Server wurde beendet, bevor die Antwort fertig war.",
    outcomes.REDIS_UNAVAILABLE: "Der Server konnte gerade nichts speichern.",
    outcomes.RUN_STRANDED: "Die Antwort ist unterwegs verloren gegangen.",
    outcomes.PAUSED: "Der Charakter war pausiert und wurde nicht wieder aktiviert.",
    outcomes.NODE_ERROR: "Auf dem Server ist ein Fehler passiert.",
    outcomes.BAD_EVENT: "Die Nachricht konnte nicht verarbeitet werden.",
}
"""Why a turn ended without an answer, by the code its `grund` starts with (German: the
terminal chat; the page has these in lang_de.js/lang_en.js as `errors.<code>`)."""

FAILURE_FALLBACK: Final = "Es kam keine Antwort zustande."


def failure_code(reason: str) -> str:
    """The code a `grund` starts with (`modell_timeout (nach responder)` → `modell_timeout`,
    `fehler_im_knoten: KeyError (router)` → `fehler_im_knoten`)."""
    return reason.split(" ", 1)[0].split(":", 1)[0].split("(", 1)[0]


def failure_sentence(reason: str) -> str:
    """A failed turn's `grund` as a sentence; never the raw code alone."""
    return FAILURES.get(failure_code(reason), FAILURE_FALLBACK)
