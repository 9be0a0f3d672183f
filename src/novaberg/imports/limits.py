"""What one import may cost: its size, its count of lines or lorebook entries, the length of a
card's fields, and the archive it would grow. Each limit is a setting (config.py, README
"Limits"); a refusal names the limit, the actual figure and the setting, so whoever reads it
knows what to change. The HTTP routes answer `TooLarge` with 413 and `QuotaFull` with 409;
the CLI ends with the sentence and exit code 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from novaberg.config import ENV_PREFIX, Settings


class TooLarge(ValueError):
    """The file is over one of the size limits (one sentence: which, by how much)."""


class QuotaFull(ValueError):
    """Storing the import would pass a per-user quota (one sentence: which)."""


def setting_name(field: str) -> str:
    return f"{ENV_PREFIX}{field.upper()}"


def over_limit(what: str, actual: int, limit: int, field: str, unit: str = "") -> str:
    """The sentence of every refusal: `the card's lorebook has 9,000 entries, over the limit
    of 5,000 entries (NOVABERG_MAX_LORE_ENTRIES)`."""
    unit = f" {unit}" if unit else ""
    setting = setting_name(field)
    return f"{what} has {actual:,}{unit}, over the limit of {limit:,}{unit} ({setting})"


@dataclass(frozen=True, slots=True)
class ImportLimits:
    card_bytes: int
    card_field_chars: int
    lore_entries: int
    import_bytes: int
    import_lines: int
    archive_turns: int

    @classmethod
    def of(cls, settings: Settings) -> ImportLimits:
        return cls(
            card_bytes=settings.max_card_bytes,
            card_field_chars=settings.max_card_field_chars,
            lore_entries=settings.max_lore_entries,
            import_bytes=settings.max_import_bytes,
            import_lines=settings.max_import_lines,
            archive_turns=settings.max_archive_turns,
        )

    def check_card_size(self, size: int) -> None:
        if size > self.card_bytes:
            raise TooLarge(over_limit("the card", size, self.card_bytes, "max_card_bytes", "bytes"))

    def check_import_size(self, size: int) -> None:
        if size > self.import_bytes:
            raise TooLarge(
                over_limit("the chat export", size, self.import_bytes, "max_import_bytes", "bytes")
            )


DEFAULT_LIMITS: Final = ImportLimits.of(Settings.model_construct())
"""The settings' defaults (no environment read): for callers that pass none, such as tests."""
