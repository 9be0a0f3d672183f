"""The last line of `novaberg chat`'s terminal: a stage line while the person waits for
Nova's answer, the prompt afterwards — a stage line of her work after the answer must not
take the prompt's place (it stayed on screen with the next typed line glued to it)."""

from __future__ import annotations

import io

from novaberg.cli.chat import PROMPT, ChatSession, Screen
from novaberg.wire import MSG_RESPONSE, MSG_STAGE, ORIGIN_OWN_THOUGHT
from terminal_screen import screen_lines as rendered


class Typist:
    """The session on a live terminal plus the terminal's echo of what the person types."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.session = ChatSession(
            "http://127.0.0.1:1", "t", "nova", Screen(self.out, live=True, width=80)
        )
        self.session.name = "Nova"

    def server(self, typ: str, **fields: object) -> None:
        self.session.show({"typ": typ, "character_id": "nova", **fields})

    def types(self, line: str) -> None:
        self.out.write(line + "\n")  # the terminal echoes it where the cursor is

    @property
    def screen(self) -> list[str]:
        return rendered(self.out.getvalue())


def test_stage_lines_show_while_waiting_and_give_way_to_the_answer() -> None:
    t = Typist()
    t.session.screen.prompt()
    t.types("Hallo")
    t.session.screen.await_answer()
    t.server(MSG_STAGE, label="nimmt wahr")
    assert t.screen[-1] == "  … Nova nimmt wahr"
    t.server(MSG_RESPONSE, nachricht="Hallo Anna.")
    assert t.screen[-2:] == ["Nova: Hallo Anna.", PROMPT]


def test_a_stage_line_after_the_answer_leaves_the_prompt_and_the_next_line_alone() -> None:
    t = Typist()
    t.session.screen.prompt()
    t.types("Hallo")
    t.session.screen.await_answer()
    t.server(MSG_STAGE, label="nimmt wahr")
    t.server(MSG_RESPONSE, nachricht="Hallo Anna.")
    t.server(MSG_STAGE, label="speichert Erinnerungen")  # her work after the answer
    t.types("Wie geht es dir?")
    screen = t.screen
    print("\n".join(screen))
    assert screen[-3:] == ["Nova: Hallo Anna.", f"{PROMPT}Wie geht es dir?", ""]
    assert not any("speichert" in line for line in screen)


def test_her_own_thought_does_not_end_the_wait_for_her_answer() -> None:
    t = Typist()
    t.session.screen.await_answer()
    t.server(MSG_RESPONSE, nachricht="Mir fiel etwas ein.", reiz_herkunft=ORIGIN_OWN_THOUGHT)
    t.server(MSG_STAGE, label="denkt nach")
    assert t.screen[-1] == "  … Nova denkt nach"
    t.server(MSG_RESPONSE, nachricht="Gut, danke.")
    assert t.screen[-1] == PROMPT
