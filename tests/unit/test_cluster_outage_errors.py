"""A Redis Cluster failover that outlasts the cluster client's own retries surfaces as
CLUSTERDOWN, TRYAGAIN, MOVED or an uncovered slot. None of them ran the command, so the
steps that ride out a Redis restart (`until_redis_back`) ride these out too."""

from __future__ import annotations

import pytest
from redis.exceptions import (
    ClusterDownError,
    MasterDownError,
    MovedError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)

from novaberg.store import retry


@pytest.mark.parametrize(
    "error",
    [
        ClusterDownError("CLUSTERDOWN The cluster is down"),
        MasterDownError("MASTERDOWN Link with MASTER is down"),
        TryAgainError("TRYAGAIN Multiple keys request during rehashing of slot"),
        MovedError("3999 127.0.0.1:6381"),
        SlotNotCoveredError("Slot 3999 is not covered by the cluster"),
    ],
)
async def test_a_failover_error_is_retried_like_an_outage(
    error: Exception, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retry, "FIRST_PAUSE", 0.001)
    attempts = 0

    async def step() -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise error
        return "done"

    assert retry.is_outage(error)
    assert await retry.until_redis_back(step, "a test step") == "done"
    assert attempts == 3


async def test_a_wrong_command_is_not_an_outage() -> None:
    error = ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value")
    assert not retry.is_outage(error)

    async def step() -> None:
        raise error

    with pytest.raises(ResponseError):
        await retry.until_redis_back(step, "a test step")
