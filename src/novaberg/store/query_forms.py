"""A question turned into search words without a model call: what the person asks *about*,
in the forms a statement of it would use (docs/behaviour/memory.md#hybrid-search, "Question
words").

- **Scaffolding** is left out: the words that make a sentence a question about memory
  ("What did Lena *say* about …", "Was *weißt* du noch über …", "What *happened* at …")
  are not what was said then, and as search words they select every turn that happens to
  use them. Function words are the text-search configurations' business already; these
  are content words that only frame the question. A question made only of them keeps them.
- **Statement forms** are added: a question asks in the present or with an auxiliary
  ("What car do I *drive*", "Wann habe ich … *gekauft*"), the statement was often said in
  another form ("I *drove*", "ich *kaufe*"). Stemming joins regular forms ("passed" and
  "pass"); irregular English verbs and German participles it does not, so their other
  forms are added here (a small table of common verbs per language, and for German the
  rule of weak participles: "gekauft" → "kauft", "eingekauft" → "einkauft").

Both languages apply to every query (the question does not say which language the
remembered turn was in); a word is a word of one language's table or of none.
"""

from __future__ import annotations

import re
from typing import Final

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def _items(text: str) -> list[str]:
    """A table written as space-separated items (easier to read than a list literal)."""
    return text.split()


def _pairs(text: str) -> list[tuple[str, str]]:
    """ "a:b c:d" → [("a", "b"), ("c", "d")]."""
    return [(left, right) for left, _, right in (item.partition(":") for item in _items(text))]


SCAFFOLDING: Final = frozenset(
    _items(
        # English: asking about memory, about what was said, and filler of questions
        "remember remembered recall recalled say said says tell told telling mention mentioned "
        "talk talked talking speak spoke spoken know knew thing things happened happen happens "
        "again anything something stuff wait "
        # German: the same
        "weißt weiss weißt wissen erinnern erinnerst erinnere erinnert sagen sagte sagtest "
        "gesagt erzählen erzählt erzählte erzähltest erwähnt erwähnte erwähnen reden geredet "
        "sprechen gesprochen passiert los nochmal nochmals eigentlich sache ding"
    )
)
"""Question scaffolding: dropped from the search words (lowercased forms)."""

_ENGLISH_IRREGULAR: Final = {
    base: forms.split("/")
    for base, forms in _pairs(
        "buy:bought bring:brought build:built catch:caught "
        "choose:chose/chosen drink:drank/drunk drive:drove/driven eat:ate/eaten "
        "fall:fell/fallen feel:felt find:found fly:flew/flown forget:forgot/forgotten "
        "get:got/gotten give:gave/given go:went/gone grow:grew/grown "
        "hear:heard hold:held keep:kept know:knew/known leave:left lend:lent lose:lost "
        "make:made meet:met pay:paid put:put ride:rode/ridden "
        "run:ran see:saw/seen sell:sold send:sent sing:sang/sung sit:sat sleep:slept "
        "speak:spoke/spoken spend:spent stand:stood steal:stole/stolen swim:swam/swum "
        "take:took/taken teach:taught think:thought throw:threw/thrown wear:wore/worn "
        "win:won write:wrote/written begin:began/begun break:broke/broken "
        "become:became fight:fought hide:hid/hidden shake:shook/shaken"
    )
}
"""English irregular verbs: base → past forms (the stemmer does not join them)."""

_GERMAN_STRONG: Final = dict(
    _pairs(
        "gefahren:fahre gegessen:esse getrunken:trinke getroffen:treffe gesehen:sehe "
        "gelesen:lese geschrieben:schreibe gefunden:finde gegangen:gehe gekommen:komme "
        "genommen:nehme gegeben:gebe geflogen:fliege geschwommen:schwimme "
        "gesungen:singe gewonnen:gewinne verloren:verliere gelaufen:laufe "
        "geschlafen:schlafe gebrochen:breche gestorben:sterbe "
        "gezogen:ziehe umgezogen:umziehe angefangen:anfange begonnen:beginne "
        "gebracht:bringe gedacht:denke gekannt:kenne geblieben:bleibe "
        "verkauft:verkaufe bekommen:bekomme "
        "gestanden:stehe gesessen:sitze gelegen:liege geholfen:helfe"
    )
)
"""German participles the weak rule does not undo: participle → first person present."""

_SEPARABLE: Final = (
    "zurück", "weg", "nach", "auf", "aus", "ein", "mit", "vor", "an", "ab", "zu", "um",
)  # fmt: skip
_WEAK_PARTICIPLE: Final = re.compile(r"^(" + "|".join(_SEPARABLE) + r")?ge([a-zäöüß]{3,}?)(e?t)$")


def _statement_forms(word: str) -> list[str]:
    """Other forms a statement may use for this (lowercased) question word."""
    forms: list[str] = []
    if word in _ENGLISH_IRREGULAR:
        forms += _ENGLISH_IRREGULAR[word]
    forms += [base for base, past in _ENGLISH_IRREGULAR.items() if word in past]
    if word in _GERMAN_STRONG:
        forms.append(_GERMAN_STRONG[word])
    else:
        weak = _WEAK_PARTICIPLE.match(word)
        if weak:  # "gekauft" → "kaufe", "eingekauft" → "einkaufe" (stemmed: "kauf")
            forms.append((weak.group(1) or "") + weak.group(2) + "e")
    forms += [p for p, present in _GERMAN_STRONG.items() if present == word]
    return [form for form in forms if form != word]


def search_words(text: str, function_words: frozenset[str] = frozenset()) -> str:
    """The query as search words: without scaffolding (unless no other word but
    `function_words` is left), with the statement forms of its verbs added."""
    kept, added = question_words(text, function_words)
    return " ".join([*kept, *added])


def question_words(
    text: str, function_words: frozenset[str] = frozenset()
) -> tuple[list[str], list[str]]:
    """(the question's own words without scaffolding, the statement forms added for them):
    `search_words` in two parts, for a caller that must tell what the person said from
    what was added."""
    words = _WORD.findall(text)
    kept = [w for w in words if w.lower() not in SCAFFOLDING]
    if all(w.lower() in function_words for w in kept):
        kept = words
    added: list[str] = []
    for word in kept:
        if word.lower() in function_words:
            continue
        for form in _statement_forms(word.lower()):
            if form not in added:
                added.append(form)
    return kept, added
