"""Which chat-completion requests resend the stored last message (a regenerate) and which
say the same words again (a new message): api/door_resend.py, on the shapes Open WebUI and
SillyTavern send."""

from __future__ import annotations

from novaberg.api.door_resend import replaces_answer

ASKED = "Wie war dein Tag?"
ANSWER = "Ruhig, danke!"


def test_open_webui_try_again_is_a_resend() -> None:
    # Try Again: the conversation up to the message, the answer it replaces cut off
    messages = [
        {"role": "system", "content": "You are Nova."},
        {"role": "user", "content": "Hallo"},
        {"role": "assistant", "content": "Hallo du!"},
        {"role": "user", "content": [{"type": "text", "text": ASKED}]},
    ]
    assert replaces_answer(messages, ASKED, ANSWER)


def test_sillytavern_swipe_is_a_resend() -> None:
    messages = [
        {"role": "system", "content": "Write Nova's next reply in a fictional chat."},
        {"role": "user", "content": f"{ASKED}\n"},
    ]
    assert replaces_answer(messages, ASKED, ANSWER)


def test_the_same_words_after_the_answer_are_a_new_message() -> None:
    messages = [
        {"role": "user", "content": ASKED},
        {"role": "assistant", "content": ANSWER},
        {"role": "user", "content": ASKED},
    ]
    assert not replaces_answer(messages, ASKED, ANSWER)


def test_another_text_is_a_new_message() -> None:
    assert not replaces_answer([{"role": "user", "content": "Und sonst?"}], ASKED, ANSWER)
