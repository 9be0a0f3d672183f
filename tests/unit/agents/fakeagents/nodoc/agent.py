"""The echo agent in a folder without AGENT.md: discovery must refuse it."""

from __future__ import annotations

from fakeagents.echo.agent import EchoAgent


class NodocAgent(EchoAgent):
    @property
    def name(self) -> str:
        return "nodoc"
