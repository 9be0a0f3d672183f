"""Which of a person's channels get an outcome, and in which words (pure; the rule is
docs/behaviour/reach.md#which-channel).

- Every open socket gets every message (the hub does that; nothing here).
- An outcome of a turn that came in through a linked chat goes back to that chat, whether
  or not a page is open: the person wrote there and waits there.
- An outcome of a turn asked through a client that waits for it in the same request (the
  OpenAI-compatible door) is answered there and goes to no chat.
- Any other outcome (an answer to the page, a failed turn, an impulse, a reminder, a
  follow-up) goes to the person's working chats only when no socket of theirs is open,
  and only to those whose kind the person lets have that category
  (store/channel_settings.py: answers, impulses, reminders).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from novaberg.events.reminders import is_reminder_turn
from novaberg.reach.origins import IN_PLACE
from novaberg.store.channel_links import ChannelLink
from novaberg.store.channel_settings import ANSWERS, IMPULSES, REMINDERS
from novaberg.wire import FIELD_ORIGIN, MSG_FAILED, MSG_RESPONSE, ORIGIN_OWN_THOUGHT

FAILED_TEXT = (
    "Das hat gerade nicht geklappt, ich konnte dir nicht antworten. "
    "Schreib es mir bitte noch einmal."
)
"""What a chat reads when a turn ended in `turn_gescheitert` (the wire reason is for
machines)."""


@dataclass(frozen=True)
class Outcome:
    """One logged outcome as the channels need it."""

    kind: str
    character_id: str
    text: str
    message_ids: list[str]
    category: str = ANSWERS
    """For the person's settings: `antworten`, `impulse` or `erinnerungen`."""
    turn_id: str = ""
    """The turn it ended (the page finds the message by it: a push opens it there)."""


def parse_outcome(message: str) -> Outcome | None:
    """The outcome in a logged wire message, or None for anything that is not one."""
    try:
        body: dict[str, Any] = json.loads(message)
    except ValueError:
        return None
    kind = body.get("typ")
    category = ANSWERS
    if kind == MSG_RESPONSE:
        text = str(body.get("nachricht") or "").strip()
        if body.get(FIELD_ORIGIN) == ORIGIN_OWN_THOUGHT:
            reminder = is_reminder_turn(str(body.get("turn_id") or ""))
            category = REMINDERS if reminder else IMPULSES
    elif kind == MSG_FAILED:
        text = FAILED_TEXT
    else:
        return None
    if not text:
        return None
    return Outcome(
        kind=str(kind),
        character_id=str(body.get("character_id") or ""),
        text=text,
        message_ids=[str(i) for i in body.get("nachrichten_ids") or []],
        category=category,
        turn_id=str(body.get("turn_id") or ""),
    )


def _everything(link: ChannelLink) -> bool:
    return True


def targets(
    links: Sequence[ChannelLink],
    *,
    socket_open: bool,
    origins: Collection[int],
    wanted: Callable[[ChannelLink], bool] = _everything,
) -> list[ChannelLink]:
    """The working links an outcome goes to: its origins always, the others that want it
    (the person's settings) when no socket is open and no client waits for it in place."""
    if IN_PLACE in origins:
        socket_open = True
    return [
        link
        for link in links
        if link.working and (link.id in origins or (not socket_open and wanted(link)))
    ]


def text_for(outcome: Outcome, link: ChannelLink) -> str:
    """The chat's text: a character other than the one the chat talks to is named."""
    if outcome.character_id and outcome.character_id != link.character_id:
        return f"{outcome.character_id}: {outcome.text}"
    return outcome.text
