"""Typed model-layer failures. A caller can always tell *why* a call produced nothing.

`ModelUnavailable` and its subclasses mean "the model cannot be used": a turn that meets
one before its answer left ends in `turn_gescheitert` (`modell_nicht_erreichbar`) instead
of running on fallbacks. `ModelTimeout`, `ModelContextExceeded` and `ModelOutputError`
concern one call: the node's documented fallback takes over.
"""

from __future__ import annotations


class ModelError(Exception):
    """Base class of every model-layer failure."""


class ModelTimeout(ModelError):
    """The backend did not answer within the configured timeout."""


class ModelUnavailable(ModelError):
    """The model cannot be used: unreachable, refused the request, 5xx after retries,
    or it could not be loaded."""


class ModelUnreachable(ModelUnavailable):
    """No connection to the server (refused, reset, DNS, connect timeout) after retries."""


class ModelRefused(ModelUnavailable):
    """The server answered but refused the request itself (4xx, or a 5xx whose body is a
    request validation error). Repeating the same request cannot help, so it is not
    retried; `server_message` is the server's own words."""

    def __init__(self, message: str, *, status: int, server_message: str) -> None:
        super().__init__(message)
        self.status = status
        self.server_message = server_message


class StructuredOutputUnsupported(ModelUnavailable):
    """`NOVABERG_LLM_STRUCTURED=auto` found no structured-output form the server honours."""


class ModelContextExceeded(ModelError):
    """The server refused one request because its prompt exceeds the model's context:
    that call cannot run, shorter ones can — so not `ModelUnavailable`."""


class ModelOutputError(ModelError):
    """The model answered, but not with what was asked for (after one retry)."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


class GateTimeout(ModelError):
    """No model-gate slot became free within the wait limit."""
