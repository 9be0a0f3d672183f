"""The pure parts of the lexical search: a text's configuration, a query's weighted terms,
and reciprocal rank fusion."""

from __future__ import annotations

import math

import pytest

from novaberg.memory.fusion import RRF_K, reciprocal_rank_fusion
from novaberg.store.text_search import (
    FREQUENT_MIN_DF,
    QueryTerms,
    build_terms,
    idf,
    length_factor,
    name_like,
    quote_lexeme,
    speaker_keys,
    text_config,
    text_configs,
)


@pytest.mark.parametrize(
    ("text", "config"),
    [
        ("Mein Nachbar heißt übrigens Korbinian.", "german"),
        ("Ich war gestern mit dem Hund im Park.", "german"),
        ("Grüße aus München", "german"),  # no function word, but German letters
        ("My neighbour is called Korbinian.", "english"),
        ("We went sailing on the lake yesterday.", "english"),
        ("Bello.", "simple"),
        ("OK 123", "simple"),
    ],
)
def test_each_text_gets_the_configuration_of_its_language(text: str, config: str) -> None:
    assert text_config(text) == config


def test_a_rare_lexeme_outweighs_a_common_one() -> None:
    assert idf(1, 10_000) > idf(100, 10_000) > idf(5_000, 10_000) > 0
    assert idf(0, 0) > 0, "an empty archive still weighs (the other layers)"
    assert length_factor(2, 10) > length_factor(10, 10) > length_factor(40, 10)
    assert math.isclose(length_factor(10, 10), 1.0)


def test_frequent_lexemes_do_not_select_candidates_but_still_weigh() -> None:
    rows = 100_000
    terms = build_terms(
        [("heute", "heut", 9_000), ("korbinian", "korbinian", 2), ("nachbar", "nachbar", 40)],
        rows,
        6.0,
    )
    assert terms.lexemes == ["heut", "korbinian", "nachbar"]
    assert terms.selecting == ["korbinian", "nachbar"]
    assert terms.weights[0] < terms.weights[2] < terms.weights[1]
    assert terms.any_query == "'korbinian' | 'nachbar'"


def test_when_every_lexeme_is_frequent_the_rarest_still_select() -> None:
    df = FREQUENT_MIN_DF * 20
    terms = build_terms([("a", "aa", df * 3), ("b", "bb", df), ("c", "cc", df * 2)], 100_000, 5.0)
    assert terms.selecting == ["bb", "cc"]


def test_words_no_lexeme_of_which_is_archived_are_looked_up_by_trigrams() -> None:
    terms = build_terms(
        [
            ("korbinain", "korbinain", 0),  # a typo: every configuration's lexeme is unknown
            ("hunde", "hund", 3),
            ("hunde", "hunde", 0),  # known through one configuration: not a typo
            ("tag", "tag", 0),  # too short to look up
        ],
        50,
        5.0,
    )
    assert terms.unknown_words == ["korbinain"]


def test_lexemes_are_quoted_so_they_are_never_normalised_again() -> None:
    assert quote_lexeme("o'brien") == "'o''brien'"
    assert quote_lexeme("a\\b") == "'a\\\\b'"


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion(
        {
            "vektor": [("a", 0.9), ("b", 0.8), ("c", 0.1)],
            "lexikalisch": [("b", 7.0), ("d", 3.0), ("b", 1.0)],
        }
    )
    assert [item.key for item in fused] == ["b", "a", "d", "c"]
    b = fused[0]
    assert math.isclose(b.score, 1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert b.signals == {"vektor": (2, 0.8), "lexikalisch": (1, 7.0)}, "a repeat counts once"
    assert reciprocal_rank_fusion({}) == []


def test_a_turn_too_short_to_tell_takes_its_conversations_language() -> None:
    german = ["Ich habe heute mit meiner Mutter telefoniert.", "Zwei Katzen.", "Und du?"]
    assert text_config("Zwei Katzen.") == "simple"
    assert text_configs(german) == ["german", "german", "german"]
    english = ["I went to the market with my sister.", "Sweet peas.", "What did you get?"]
    assert text_configs(english) == ["english", "english", "english"]
    assert text_configs(["Mephisto.", "Pieps."]) == ["simple", "simple"], "nothing to tell by"


def test_the_topic_is_the_questions_own_words_without_speakers_or_added_forms() -> None:
    terms = QueryTerms(
        ["broke", "lena", "wrist"],
        [1.0, 1.0, 1.0],
        ["broke", "lena", "wrist"],
        [],
        100,
        5.0,
        speakers=("lena",),
        added_words=frozenset({"broke"}),
        word_of={
            "broke": frozenset({"broke"}),
            "lena": frozenset({"lena"}),
            "wrist": frozenset({"wrist"}),
        },
    )
    assert terms.topic == ["wrist"]


def test_a_compound_of_the_pair_joins_the_query_weighing_at_most_its_head() -> None:
    terms = build_terms(
        [("blume", "blum", 40), ("blume", "blume", 0)],
        1_000,
        5.0,
        parts=[("blume", "lieblingsblum", 1, "blum")],
    )
    weight = dict(zip(terms.lexemes, terms.weights, strict=True))
    assert "lieblingsblum" in terms.selecting
    assert weight["lieblingsblum"] == pytest.approx(weight["blum"]), "never above the word"
    assert idf(1, 1_000) > weight["blum"]


def test_a_query_compound_finds_its_head_weighing_what_the_head_weighs() -> None:
    terms = build_terms(
        [("fußballmannschaft", "fussballmannschaft", 0)],
        1_000,
        5.0,
        parts=[("fußballmannschaft", "mannschaft", 30, "fussballmannschaft")],
    )
    weight = dict(zip(terms.lexemes, terms.weights, strict=True))
    assert weight["mannschaft"] == pytest.approx(idf(30, 1_000))
    assert terms.unknown_words == [], "a word found as a compound's part is no typo"


def test_a_compound_part_that_is_a_query_lexeme_keeps_its_own_weight() -> None:
    terms = build_terms(
        [("schule", "schul", 5), ("waldorfschule", "waldorfschul", 2)],
        1_000,
        5.0,
        parts=[("schule", "waldorfschul", 2, "schul")],
    )
    weight = dict(zip(terms.lexemes, terms.weights, strict=True))
    assert weight["waldorfschul"] == pytest.approx(idf(2, 1_000))


@pytest.mark.parametrize(
    ("question", "nouns"),
    [
        ("Wann wurde mein Neffe geboren?", {"neffe"}),
        ("Welches Geschenk habe ich für Papa ausgesucht?", {"geschenk", "papa"}),
        ("Wohin fliegen wir im Mai?", {"mai"}),
        ("Worüber hat Lena gelacht?", {"lena"}),
        ("Which band did Tom see?", {"tom"}),
        ("Blumen mag ich am liebsten.", {"blumen"}),  # a noun opening a sentence stays
    ],
)
def test_capitalised_interrogatives_are_no_names_and_no_nouns(question: str, nouns: set) -> None:
    assert name_like(question) == nouns


@pytest.mark.parametrize(
    ("names", "keys"),
    [
        ({"lenas"}, ["lena", "lenas"]),  # "Lenas Meinung": the genitive of Lena
        ({"toms"}, ["tom", "toms"]),
        ({"lena"}, ["lena"]),
        ({"ms"}, ["ms"]),  # too short to be a genitive
    ],
)
def test_a_speaker_may_be_asked_by_the_genitive(names: set, keys: list) -> None:
    assert speaker_keys(names) == keys
