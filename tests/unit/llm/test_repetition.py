"""`repetition_cut`: where a small model's looping free text is stopped."""

from __future__ import annotations

from novaberg.llm.repetition import REPEAT_WINDOW, repetition_cut

LINE = "Wie geht es dir heute? Mir geht es gut, danke.\n\n"


def test_a_text_that_does_not_repeat_itself_runs_on() -> None:
    assert repetition_cut("") is None
    assert repetition_cut(LINE) is None
    prose = (
        "Anna zieht nächste Woche nach Köln. Sie freut sich auf den Rhein, "
        "ihre neue Wohnung liegt in Ehrenfeld und die Arbeit beginnt im Mai."
    )
    assert repetition_cut(prose) is None


def test_a_loop_is_cut_after_its_first_round() -> None:
    assert repetition_cut(LINE * 2) == LINE.rstrip()
    assert repetition_cut(LINE * 5) == LINE.rstrip()
    assert repetition_cut("Hallo! " + LINE * 2) == "Hallo! " + LINE.rstrip()


def test_a_loop_caught_in_the_middle_of_a_round_keeps_one_whole_round() -> None:
    """Streamed tokens end anywhere: the cut still falls where the repeat began."""
    assert repetition_cut("Hallo! " + LINE * 2 + LINE[:10]) == "Hallo! " + LINE.rstrip()


def test_short_loops_are_caught_once_they_fill_the_window() -> None:
    stutter = "ha " * (REPEAT_WINDOW // 3 * 2 + 2)
    assert repetition_cut(stutter) == "ha"


def test_a_repeat_shorter_than_the_window_is_left_alone() -> None:
    """Quoting a few words twice is normal; only a repeat of a whole window is a loop."""
    text = "Du hast gesagt: ich komme morgen. Gut, ich komme morgen also auch mit."
    assert repetition_cut(text) is None
