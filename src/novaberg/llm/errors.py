"""Typed model-layer failures. A caller can always tell *why* a call produced nothing."""

from __future__ import annotations


class ModelError(Exception):
    """Base class of every model-layer failure."""


class ModelTimeout(ModelError):
    """The backend did not answer within the configured timeout."""


class ModelUnavailable(ModelError):
    """Connection refused, 5xx after retries, or the model could not be loaded."""


class ModelOutputError(ModelError):
    """The model answered, but not with what was asked for (after one retry)."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


class GateTimeout(ModelError):
    """No model-gate slot became free within the wait limit."""
