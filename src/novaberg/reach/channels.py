"""What a channel is to the sender: something that sends an outcome to one link and says
how it failed. Telegram is one (reach/telegram.py), Web Push another (reach/push.py), with
the same failures (a blocked bot answers 403, an expired subscription 404/410: permanent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from novaberg.reach.routing import Outcome
    from novaberg.store.channel_links import ChannelLink


class ChannelFailure(Exception):
    """A send that did not go through; `permanent` says whether trying again can help."""

    permanent: bool = False

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        """Seconds the channel asked us to wait (Telegram's 429), None if it did not say."""


class PermanentFailure(ChannelFailure):
    """The target is gone for good (bot blocked: 403, chat not found): mark it, stop."""

    permanent = True


class TransientFailure(ChannelFailure):
    """Network, 5xx, 429: worth another try after a pause."""


class MessageRefused(ChannelFailure):
    """The channel refused this one message (400 for its content): the target stays in use,
    trying the same message again cannot help."""


class Channel(Protocol):
    kind: str
    """`art` of the links this channel serves (store/channel_links.py)."""

    async def send(self, link: ChannelLink, outcome: Outcome, seq: int) -> None:
        """Send outcome `seq` (the person's delivery sequence number) to the link, in the
        channel's own form, or raise `ChannelFailure`."""
        ...
