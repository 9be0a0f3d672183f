"""Prompt templates: one `<name>.txt` per model call, in a `[BLOCKNAME]` scheme
(docs/behaviour/llm.md#prompts).

A template is a sequence of blocks, each opened by a header line in square brackets::

    [AUFGABE]
    Analysiere die Äußerung ...

    [KONTEXT?]
    Bisheriges Gespräch:
    {verlauf}

    [AUFGABE@human]
    Only rendered when render(..., variant="human").

Rules of `render(name, variant=None, **values)`:

- `{placeholder}` (lower-case identifier) is replaced by the value of that keyword; JSON
  examples such as `{"intent": ...}` are left alone. A placeholder without a value raises
  `KeyError`; a keyword the template does not use raises `TypeError` (typos surface).
- A header ending in `?` marks an **optional** block: it is omitted entirely, header
  included, when every placeholder in it is empty. Mandatory blocks are always rendered.
- A header `[NAME@variant]` is a role variant: rendered (as `[NAME]`) only when
  `variant == "variant"`; other variants are dropped.
- Text before the first header is kept as a preamble. Blocks are separated by one empty
  line; the result is stripped.

Keep prompts short: the bundled model (SmolLM2-135M) has a 2048-token context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

PROMPT_DIR: Final = Path(__file__).resolve().parent

_HEADER = re.compile(r"^\[([A-Z0-9ÄÖÜ_ \-]+?)(?:@([a-z_]+))?(\?)?\]\s*$")
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class Block:
    name: str  # "" for the preamble
    variant: str | None
    optional: bool
    body: str
    placeholders: tuple[str, ...] = ()
    """The body's placeholder names, found once when the template is parsed."""

    @classmethod
    def parse(cls, name: str, variant: str | None, optional: bool, body: str) -> Block:
        return cls(name, variant, optional, body, tuple(_PLACEHOLDER.findall(body)))


@lru_cache(maxsize=64)
def load_prompt(name: str) -> str:
    """The raw template text of `prompts/<name>.txt` (cached)."""
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise ValueError(f"bad prompt name {name!r}")
    path = PROMPT_DIR / f"{name}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"no prompt template {path}")
    return path.read_text(encoding="utf-8")


@lru_cache(maxsize=64)
def parse_blocks(name: str) -> tuple[Block, ...]:
    """The template's blocks in order (cached)."""
    blocks: list[Block] = []
    current: tuple[str, str | None, bool] = ("", None, False)
    lines: list[str] = []

    def close() -> None:
        body = "\n".join(lines).strip("\n")
        if current[0] or body.strip():
            blocks.append(Block.parse(current[0], current[1], current[2], body))

    for line in load_prompt(name).splitlines():
        match = _HEADER.match(line)
        if match:
            close()
            current = (match.group(1).strip(), match.group(2), bool(match.group(3)))
            lines = []
        else:
            lines.append(line)
    close()
    return tuple(blocks)


@lru_cache(maxsize=64)
def placeholders(name: str) -> frozenset[str]:
    """Every placeholder used anywhere in the template (all variants; cached)."""
    return frozenset(ph for block in parse_blocks(name) for ph in block.placeholders)


def _fill(body: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], body)


def render(name: str, /, *, variant: str | None = None, **values: Any) -> str:
    """The filled prompt text (see the module docstring; `variant` is a reserved keyword)."""
    blocks = parse_blocks(name)
    unknown = set(values) - placeholders(name)
    if unknown:
        raise TypeError(f"prompt {name!r} has no placeholder(s) {sorted(unknown)}")
    texts = {key: "" if value is None else str(value) for key, value in values.items()}
    parts: list[str] = []
    for block in blocks:
        if block.variant is not None and block.variant != variant:
            continue
        missing = [ph for ph in block.placeholders if ph not in texts]
        if missing:
            raise KeyError(f"prompt {name!r} block [{block.name}] needs {missing}")
        if block.optional and all(not texts[ph].strip() for ph in block.placeholders):
            continue
        body = _fill(block.body, texts).strip("\n")
        parts.append(f"[{block.name}]\n{body}" if block.name else body)
    return "\n\n".join(part.strip() for part in parts if part.strip()).strip()


def user_message(text: str) -> list[dict[str, str]]:
    """The message list for a single-turn prompt."""
    return [{"role": "user", "content": text}]
