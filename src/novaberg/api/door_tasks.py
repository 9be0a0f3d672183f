"""Background tasks of a front-end, recognised by their shape at the OpenAI door.

Front-ends ask their model for more than the person's next message: Open WebUI for a chat
title, tags, follow-up suggestions, search queries or an autocompletion; SillyTavern for
quiet prompts (a summary, an image prompt, an expression) and for impersonation (a reply
written as the person). Sent through the door as if the person had spoken, each became a
turn: stored as the person's message, routed to an agent, remembered. Such a request is no
utterance; the door answers it with one direct model call (api/door_task_answer.py) and
stores nothing.

The shapes, from the front-ends' documented behaviour (only short markers are matched):

- **Open WebUI** sends each task as one `user` message whose text starts with `### Task:`
  and carries at least one more of its section headers (`### Guidelines`, `### Output`,
  `### Examples`, `### Chat History`) or the `<chat_history>` / `<text>` wrappers.
- **SillyTavern** appends its quiet prompt or its impersonation prompt after the chat, as
  the last message (a `system` message, or a `user` one when the connection squashes
  roles). Its default prompts open with recognisable instructions: "Write your next reply
  from the point of view of" (impersonation), "Pause your roleplay", "Ignore previous
  instructions", "In the next response I want you to provide only" (quiet prompts), each
  possibly in `[…]`.

A person who writes one of these phrases to Nova herself, as the last message, is taken
for a task; the setting `NOVABERG_DOOR_TASK_RECOGNITION=false` turns recognition off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final


class TaskKind(StrEnum):
    OPEN_WEBUI = "open_webui"
    QUIET = "quiet"
    IMPERSONATION = "impersonation"


@dataclass(frozen=True, slots=True)
class BackgroundTask:
    kind: TaskKind
    messages: list[dict[str, str]]
    """The request's messages as plain text, for the one model call that answers it."""
    wants_json: bool
    """The task asks for a JSON answer (Open WebUI's `### Output` sections)."""


OPEN_WEBUI_START: Final = re.compile(r"^\s*###\s*Task:", re.IGNORECASE)
OPEN_WEBUI_SECTIONS: Final = re.compile(
    r"###\s*(Guidelines|Output|Examples|Chat History)\b|<chat_history>|<text>", re.IGNORECASE
)
JSON_OUTPUT: Final = re.compile(r"###\s*Output.*?\bJSON\b", re.IGNORECASE | re.DOTALL)

IMPERSONATION_MARKERS: Final = ("write your next reply from the point of view of",)
QUIET_MARKERS: Final = (
    "pause your roleplay",
    "ignore previous instructions",
    "in the next response i want you to provide only",
)


def message_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _opening(text: str) -> str:
    return text.lstrip().lstrip("[").lstrip().lower()


def recognize(messages: list[dict[str, Any]]) -> BackgroundTask | None:
    """The background task the request's messages are, or None for a person's message."""
    if not messages:
        return None
    plain = [
        {"role": str(m.get("role", "user")), "content": message_text(m.get("content"))}
        for m in messages
        if m.get("role") in ("system", "developer", "user", "assistant")
    ]
    last = plain[-1] if plain else None
    if last is None or last["role"] == "assistant":
        return None
    text = last["content"]
    if (
        last["role"] == "user"
        and OPEN_WEBUI_START.search(text)
        and OPEN_WEBUI_SECTIONS.search(text)
    ):
        return BackgroundTask(TaskKind.OPEN_WEBUI, plain, bool(JSON_OUTPUT.search(text)))
    opening = _opening(text)
    if opening.startswith(IMPERSONATION_MARKERS):
        return BackgroundTask(TaskKind.IMPERSONATION, plain, False)
    if opening.startswith(QUIET_MARKERS):
        return BackgroundTask(TaskKind.QUIET, plain, False)
    return None
