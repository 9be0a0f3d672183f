"""Which answers the prompt-leak guard takes for instruction text (graph/prompt_leak.py)."""

from __future__ import annotations

from novaberg.graph.nodes.responder import IMPULSE_PROMPT
from novaberg.graph.prompt_leak import instruction_ngrams, leaked_phrases, template_runs

LEAK = "Das sollst du inhaltlich sagen (Person A ist der Nutzer, Person B bist du). Gib es"


def test_the_leak_seen_from_the_bundled_model_is_caught() -> None:
    assert any("person b bist du" in phrase for phrase in leaked_phrases(LEAK))


def test_instruction_text_written_in_code_counts() -> None:
    assert leaked_phrases(IMPULSE_PROMPT)


def test_ordinary_answers_do_not_leak() -> None:
    for answer in (
        "Schön, dass du fragst! Mir geht es gut. Wie war dein Tag?",
        "Oh, das klingt anstrengend. Magst du mir erzählen, was passiert ist?",
        "I'm fine, thanks for asking. What did you do today?",
    ):
        assert leaked_phrases(answer) == [], answer


def test_the_persons_words_and_the_material_are_not_instructions() -> None:
    assert leaked_phrases(LEAK, [f"Was heißt „{LEAK}“?"]) == []
    assert leaked_phrases(LEAK, ["", LEAK]) == []


def test_placeholders_and_headers_split_the_runs() -> None:
    runs = template_runs("[AUFGABE]\nSag etwas über {thema} und dann mehr\n[KONTEXT?]\n{verlauf}")
    assert all("{" not in run and "[AUFGABE]" not in run for run in runs)
    assert instruction_ngrams() is instruction_ngrams(), "computed once"
