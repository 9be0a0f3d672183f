"""A question becomes search words without a model call: scaffolding out, statement forms
in — per phrase, in English and German (store/query_forms.py)."""

from __future__ import annotations

import pytest

from novaberg.store.query_forms import search_words
from novaberg.store.text_search import _FUNCTION_WORDS


@pytest.mark.parametrize(
    ("question", "words"),
    [
        # scaffolding: what frames the question is not what was said
        ("What did Lena say about the allotment?", "What did Lena about the allotment"),
        ("Do you remember what I told you about Tom?", "Do you what I you about Tom"),
        ("What happened at work in March?", "What at work in March"),
        ("What was the thing with Quast?", "What was the with Quast"),
        ("Was weißt du noch über Wegscheider?", "Was du noch über Wegscheider"),
        ("Was hat Lena über die Parzelle gesagt?", "Was hat Lena über die Parzelle"),
        ("Was ist im März bei der Arbeit passiert?", "Was ist im März bei der Arbeit"),
        ("Hab ich dir nochmal erzählt, wie mein Kater heißt?", "Hab ich dir wie mein Kater heißt"),
        # a question of scaffolding only keeps it
        ("What did I say?", "What did I say"),
        ("Was hast du gesagt?", "Was hast du gesagt sage"),
        # statement forms: English irregular verbs both ways
        ("What car do I drive now?", "What car do I drive now drove driven"),
        ("Where did I buy the lamp?", "Where did I buy the lamp bought"),
        ("Who did I meet at the party?", "Who did I meet at the party met"),
        ("Which bike did we sell?", "Which bike did we sell sold"),
        ("Where is the ring I bought?", "Where is the ring I bought buy"),
        # German participles: weak by rule, strong and mixed by table, and back
        ("Wann habe ich das Sofa gekauft?", "Wann habe ich das Sofa gekauft kaufe"),
        ("Was habe ich eingekauft?", "Was habe ich eingekauft einkaufe"),
        ("Wo haben wir geheiratet?", "Wo haben wir geheiratet heirate"),
        ("Wann bin ich nach Hamburg gezogen?", "Wann bin ich nach Hamburg gezogen ziehe"),
        ("Wohin fahre ich im Sommer?", "Wohin fahre ich im Sommer gefahren"),
        ("Wen habe ich im Urlaub getroffen?", "Wen habe ich im Urlaub getroffen treffe"),
        # words that only look like forms stay alone
        ("Was war im März beim Zahnarzt?", "Was war im März beim Zahnarzt"),
        ("Wie geht es meiner Schwester?", "Wie geht es meiner Schwester"),
    ],
)
def test_a_question_becomes_search_words(question: str, words: str) -> None:
    assert search_words(question, _FUNCTION_WORDS) == words
