"""The echo agent in a folder whose name starts with `_`: discovery must skip it."""

from __future__ import annotations

from fakeagents.echo.agent import EchoAgent


class HiddenAgent(EchoAgent):
    @property
    def name(self) -> str:
        return "hidden"
