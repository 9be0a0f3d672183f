"""Which requests the door takes for a front-end's background task (api/door_tasks.py),
and how a JSON task's answer is cut out (api/door_task_answer.py)."""

from __future__ import annotations

import pytest

from novaberg.api.door_task_answer import first_json_object
from novaberg.api.door_tasks import TaskKind, recognize

CHAT = [
    {"role": "system", "content": "Write Nova's next reply."},
    {"role": "user", "content": "Hallo Nova"},
    {"role": "assistant", "content": "Hallo!"},
]


@pytest.mark.parametrize(
    ("last", "kind"),
    [
        (
            {"role": "user", "content": "### Task:\nA title.\n### Output:\nJSON format: {}"},
            TaskKind.OPEN_WEBUI,
        ),
        (
            {
                "role": "user",
                "content": [{"type": "text", "text": " ### Task: tags\n<chat_history>x"}],
            },
            TaskKind.OPEN_WEBUI,
        ),
        (
            {"role": "system", "content": "[Write your next reply from the point of view of A]"},
            TaskKind.IMPERSONATION,
        ),
        ({"role": "user", "content": "[Pause your roleplay. Classify.]"}, TaskKind.QUIET),
        ({"role": "system", "content": "Ignore previous instructions. Sum up."}, TaskKind.QUIET),
    ],
)
def test_task_shapes_are_recognised(last: dict[str, object], kind: TaskKind) -> None:
    task = recognize([*CHAT, last])
    assert task is not None
    assert task.kind is kind
    assert task.messages[-1]["role"] == last["role"]


@pytest.mark.parametrize(
    "last",
    [
        {"role": "user", "content": "Wie geht es dir?"},
        {"role": "user", "content": "Schau mal: ### Task: und ### Output: in meinem Text"},
        {"role": "user", "content": "### Task: mein Einkaufszettel"},  # no further section
        {"role": "system", "content": "[Stay in character; write two paragraphs.]"},
        {"role": "assistant", "content": "### Task:\n### Output:"},
    ],
)
def test_a_persons_message_and_post_history_instructions_are_no_task(
    last: dict[str, object],
) -> None:
    assert recognize([*CHAT, last]) is None


def test_open_webui_json_output_is_noted() -> None:
    task = recognize(
        [{"role": "user", "content": '### Task: t\n### Output:\nJSON format: {"a": 1}'}]
    )
    assert task is not None and task.wants_json
    plain = recognize([{"role": "user", "content": "### Task: t\n### Guidelines:\n- be brief"}])
    assert plain is not None and not plain.wants_json


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Sure! {"title": "🌊 See"} Enjoy.', '{"title": "🌊 See"}'),
        ('```json\n{"tags": ["a", "b"]}\n```', '{"tags": ["a", "b"]}'),
        ('{broken {"ok": true}', '{"ok": true}'),
        ("no json here", None),
    ],
)
def test_the_first_json_object_is_cut_out(text: str, expected: str | None) -> None:
    assert first_json_object(text) == expected
