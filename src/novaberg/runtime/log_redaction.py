"""No secret reaches a log: API tokens are masked in every log record of the process.

Why at record creation (`logging.setLogRecordFactory`) and not in a handler or filter:
records travel to handlers nobody here configures (uvicorn's own loggers do not propagate,
pytest and external ASGI servers add theirs), and uvicorn's access formatter reads
`record.args` directly rather than the formatted message. Masking the record itself before
any handler sees it covers all of them, at every level.

What is masked: the value of any `token=` query parameter (the WebSocket URL carries the
token there), the credential after `Bearer`, and anything shaped like a Novaberg token
(`nvb_…`, store/users.py), a Telegram bot token in a Bot API URL, in the message, its arguments, the exception text and the stack.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Callable, Mapping
from typing import Any

MASK = "***"

SECRET = re.compile(
    r"(?P<key>token=)[^&\s'\"\\]+"
    r"|(?P<scheme>[Bb]earer\s+)[^\s'\",\\]+"
    r"|(?P<prefix>nvb_)[A-Za-z0-9_\-]+"
    r"|(?P<bot>/bot)\d+:[A-Za-z0-9_\-]+"
)
"""A `token=` value, a bearer credential, a Novaberg token (prefix `nvb_`), a Telegram bot
token in a Bot API URL (`/bot123:ABC…/sendMessage`: the HTTP client logs every request)."""

_PRIMITIVES = (int, float, bool, type(None), bytes)

_installed = False


def redact(text: str) -> str:
    """`text` with every secret replaced by its label and `***`."""
    if "token=" not in text and "earer" not in text and "nvb_" not in text and "/bot" not in text:
        return text  # the common case: nothing to look at
    return SECRET.sub(_mask, text)


def _mask(match: re.Match[str]) -> str:
    label = (
        match.group("key") or match.group("scheme") or match.group("prefix") or match.group("bot")
    )
    label = label or ""
    return label + MASK


def _clean(value: Any) -> tuple[Any, bool]:
    """The value with secrets masked, and whether it could only be checked by rendering it
    (an object whose text is not known before it is formatted)."""
    if isinstance(value, str):
        return redact(value), False
    if isinstance(value, bytes):
        text = value.decode("latin-1")
        return (value if redact(text) == text else redact(text).encode("latin-1")), False
    if isinstance(value, _PRIMITIVES):
        return value, False
    if isinstance(value, tuple | list):
        parts = [_clean(v) for v in value]
        return type(value)(p[0] for p in parts), any(p[1] for p in parts)
    return value, True


def scrub(record: logging.LogRecord) -> None:
    """Mask secrets in the record in place (message, arguments, exception, stack)."""
    opaque = False
    if isinstance(record.msg, str):
        record.msg = redact(record.msg)
    else:
        opaque = True
    if isinstance(record.args, Mapping):
        cleaned = {k: _clean(v) for k, v in record.args.items()}
        record.args = {k: v[0] for k, v in cleaned.items()}
        opaque = opaque or any(v[1] for v in cleaned.values())
    elif isinstance(record.args, tuple):
        parts = [_clean(v) for v in record.args]
        record.args = tuple(p[0] for p in parts)
        opaque = opaque or any(p[1] for p in parts)
    if opaque:  # an object (a scope dict, an exception, ...): render it once and look
        try:
            rendered = record.getMessage()
        except Exception:  # a broken format string: logging reports it later as usual
            rendered = None
        if rendered is not None and redact(rendered) != rendered:
            record.msg, record.args = redact(rendered), ()
    if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if redact(text) != text:
            record.exc_text = redact(text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


def install() -> None:
    """Mask secrets in every record created from now on (once per process; a factory
    installed later by someone else wraps this one and so sees masked records)."""
    global _installed
    if _installed:
        return
    current: Callable[..., logging.LogRecord] = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = current(*args, **kwargs)
        scrub(record)
        return record

    logging.setLogRecordFactory(factory)
    _installed = True
