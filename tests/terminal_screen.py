"""Enough of a terminal to read what `novaberg chat` leaves on screen (shared by the unit
test of its screen and the pseudo-terminal test of the real command)."""

from __future__ import annotations

import re

COLOR = re.compile(r"\x1b\[[0-9;]*m")


def screen_lines(raw: str) -> list[str]:
    """The lines a terminal shows for `raw`: `\\r` returns to the line start, `ESC[K`
    clears to its end, `\\n` starts a new line; colours are dropped."""
    lines, line, column = [], "", 0
    for token in re.split(r"(\r|\n|\x1b\[K)", COLOR.sub("", raw)):
        if token == "\r":
            column = 0
        elif token == "\n":
            lines.append(line)
            line, column = "", 0
        elif token == "\x1b[K":
            line = line[:column]
        else:
            line = line[:column] + token + line[column + len(token) :]
            column += len(token)
    return [*lines, line]
