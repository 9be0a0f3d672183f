"""The answer to a front-end's background task (api/door_tasks.py): one direct model call
with the request's own messages, under the model gate like any other call, and nothing
else — no queue, no turn, no agent, no memory, nothing stored. The front-end wrote the
task and reads the answer; Nova is not part of it.

Impersonation writes a message as the person would, in the conversation's voice, so it
takes the chat model; titles, tags, summaries and the like the background model. A task
whose `### Output` asks for JSON gets the first JSON object of the answer (small models
like to wrap it in prose or a code fence), or the answer as it came when it holds none.
"""

from __future__ import annotations

import json
from typing import Final

from novaberg.api.context import AppContext
from novaberg.api.door_tasks import BackgroundTask, TaskKind
from novaberg.config import Role
from novaberg.llm.gate import Priority

MAX_TASK_TOKENS: Final = 1024
"""The most a task's answer may take, whatever the client asks: titles and tags are short."""

ROLES: Final = {
    TaskKind.OPEN_WEBUI: Role.BACKGROUND,
    TaskKind.QUIET: Role.BACKGROUND,
    TaskKind.IMPERSONATION: Role.CHAT,
}
"""The model of a task; a background one also waits behind the people's turns at the gate."""


def first_json_object(text: str) -> str | None:
    """The first complete JSON object in `text`, re-serialised; None if there is none."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
        start = text.find("{", start + 1)
    return None


async def answer_task(ctx: AppContext, task: BackgroundTask, max_tokens: int | None) -> str:
    """The task's answer; model errors (ModelError) propagate to the door."""
    limit = min(max_tokens or MAX_TASK_TOKENS, MAX_TASK_TOKENS)
    role = ROLES[task.kind]
    priority = Priority.USER if role is Role.CHAT else Priority.BACKGROUND
    async with ctx.gate.slot(priority):
        text = await ctx.model.chat(role, task.messages, max_tokens=limit)
    if task.wants_json:
        return first_json_object(text) or text.strip()
    return text.strip()
