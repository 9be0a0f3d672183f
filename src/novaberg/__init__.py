"""Novaberg. Importing the package masks API tokens in every log record of the process
(runtime/log_redaction.py): whatever the entry point - `novaberg` commands, an external ASGI
server, tests - no secret reaches a log."""

from novaberg.runtime import log_redaction as _log_redaction

__version__ = "0.1.0"

_log_redaction.install()
