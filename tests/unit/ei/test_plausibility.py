"""EI arousal, mode and style checks, rule-based language style (spec emotion §6, §14.5-6)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novaberg.ei.plausibility import (
    check_mode,
    check_style,
    ei_arousal,
    plausibility_pass,
    rule_based_style,
    score_text,
    style_scores,
    tiebreak_profile,
)


def user(text: str) -> dict:
    return {"rolle": "user", "inhalt": text, "emotion": "neutral", "arousal": 0.5}


def test_ei_arousal_spec_example() -> None:
    assert ei_arousal(0.6, "hilfesuchend", "personal", "empathisch") == pytest.approx(0.765)


def test_ei_arousal_is_capped_at_one() -> None:
    assert ei_arousal(1.0, "hilfesuchend", "personal", "empathisch") == 1.0


def test_ei_arousal_unknown_labels_count_one() -> None:
    assert ei_arousal(0.5, "x", "y", "z") == pytest.approx(0.5)
    # 0.8 × (0.40·0.7 + 0.35·0.3 + 0.25·0.3) = 0.368
    assert ei_arousal(0.8, "distanz", "task", "sachlich") == pytest.approx(0.368)


@given(st.floats(0, 1), st.text(max_size=5), st.text(max_size=5), st.text(max_size=5))
def test_ei_arousal_stays_in_unit_interval(a: float, d: str, i: str, t: str) -> None:
    assert 0.0 <= ei_arousal(a, d, i, t) <= 1.0


@pytest.mark.parametrize(
    ("emotion", "mode", "ei", "expected"),
    [
        ("traurigkeit", "alltag", 0.0, "emotional"),
        ("verzweiflung", "fachgespraech", 0.1, "emotional"),
        ("neutral", "emotional", 0.9, "alltag"),
        ("neutral", "kreativ", 0.9, "kreativ"),
        ("angst", "emotional", 0.9, "alltag"),  # perceived name, not canonicalised
        ("stress", "alltag", 0.41, "emotional"),
        ("stress", "alltag", 0.4, "alltag"),
        ("wut", "beratend", 0.5, "emotional"),
        ("freude", "alltag", 0.71, "emotional"),
        ("freude", "alltag", 0.7, "alltag"),
        ("freude", "alltag", 0.5, "alltag"),
        ("ueberrascht", "alltag", 1.0, "alltag"),
        ("ueberrascht", "emotional", 0.0, "emotional"),
    ],
)
def test_mode_check(emotion: str, mode: str, ei: float, expected: str) -> None:
    assert check_mode(emotion, mode, ei) == expected


@pytest.mark.parametrize(
    ("perceived", "rule", "emotion", "ei", "tone", "expected"),
    [
        ("emotional", "locker", "freude", 0.5, "sachlich", "locker"),
        ("emotional", "locker", "neutral", 0.5, "empathisch", "locker"),
        ("emotional", "locker", "freude", 0.5, "empathisch", "emotional"),
        ("emotional", "emotional", "neutral", 0.5, "sachlich", "emotional"),
        ("emotional", "locker", "stress", 0.5, "sachlich", "emotional"),  # strong negative
        ("emotional", "locker", "freude", 0.8, "sachlich", "emotional"),  # strong positive
        ("formell", "jugendlich", "freude", 0.1, "sachlich", "formell"),
        ("neutral", "jugendlich", "freude", 0.1, "sachlich", "jugendlich"),
        ("", "fachlich", "freude", 0.1, "sachlich", "fachlich"),
        ("", "fachlich", "stress", 0.9, "sachlich", "fachlich"),
    ],
)
def test_style_check(
    perceived: str, rule: str, emotion: str, ei: float, tone: str, expected: str
) -> None:
    assert check_style(perceived, rule, emotion, ei, tone) == expected


def test_scores_slang_text() -> None:
    assert score_text("yo digga lol") == {
        "locker": 3,
        "formell": -8,
        "fachlich": 0,
        "emotional": 1,
        "jugendlich": 11,
    }


def test_scores_formal_text() -> None:
    text = (
        "Sehr geehrte Damen und Herren, ich würde Ihnen gerne mitteilen, dass die Unterlagen "
        "vollständig eingegangen sind."
    )
    assert score_text(text) == {
        "locker": 0,
        "formell": 14,
        "fachlich": 7,
        "emotional": 0,
        "jugendlich": -1,
    }


def test_scores_expressive_markers() -> None:
    base = score_text("das ist heute gut gelaufen")
    assert score_text("das ist heute SUPER gelaufen")["emotional"] == base["emotional"] + 2
    assert score_text("das ist heute gut gelaufen 😀")["emotional"] == base["emotional"] + 1
    assert score_text("oh das ist heute gut gelaufen")["emotional"] == base["emotional"] + 2
    assert score_text("das ist heute gut gelaufen!!")["emotional"] == base["emotional"] + 2
    # an abbreviation removes the "no slang, emoji, abbreviation" bonus: fo +1 → −1 net −2
    assert score_text("das ist heute evtl gelaufen")["formell"] == base["formell"] - 2


def test_word_lists_match_whole_tokens_only() -> None:
    assert score_text("alternativ geht das auch") == score_text("irgendwie geht das auch")


def test_neutral_style_when_no_score_reaches_one_and_a_half() -> None:
    turns = [user("ich gehe heute mit meinem hund lange im park spazieren")]
    assert rule_based_style(turns, "user") == "neutral"


def test_rule_based_style_picks_top_score() -> None:
    assert rule_based_style([user("yo digga lol")], "user") == "jugendlich"


def test_rule_based_style_tiebreak_by_profile() -> None:
    turns = [user("na gut dann eben morgen")]  # locker 3, jugendlich 2
    assert rule_based_style(turns, "user") == "locker"
    profile = tiebreak_profile("schreibt jugendlich mit emojis", "")
    assert rule_based_style(turns, "user", profile) == "jugendlich"
    # the first matching style (formell) has score −1 → no adoption, top stays
    assert rule_based_style(turns, "user", "sehr höflich, gern jugendlich") == "locker"


def test_style_reads_last_five_turns_of_the_role() -> None:
    slang = user("yo digga lol")
    plain = user("ich gehe heute mit meinem hund lange im park spazieren")
    other = {"rolle": "assistant", "inhalt": "yo digga lol"}
    five_plain = style_scores([slang, *[plain] * 5, other], "user")
    assert five_plain == style_scores([plain] * 5, "user")
    assert style_scores([slang, *[plain] * 4], "user")["jugendlich"] == 11 + 4


def test_plausibility_pass_combines_checks() -> None:
    result = plausibility_pass(
        "traurigkeit",
        0.6,
        "alltag",
        "emotional",
        "hilfesuchend",
        "personal",
        "empathisch",
        [user("yo digga lol")],
        "user",
    )
    assert result.ei == pytest.approx(0.765)
    assert result.mode == "emotional"
    assert result.rule_style == "jugendlich"
    assert result.language_style == "emotional"


def test_scoring_the_same_text_again_gives_a_fresh_equal_result() -> None:
    """`score_text` is memoised; a caller changing its result changes no later result."""
    first = score_text("Na, alles klar bei dir?")
    first["locker"] += 100
    second = score_text("Na, alles klar bei dir?")
    assert second is not first
    assert second["locker"] == first["locker"] - 100
    assert style_scores([{"rolle": "user", "inhalt": "Na, alles klar bei dir?"}], "user") == second
