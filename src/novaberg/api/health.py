"""`GET /health`: the checks of `novaberg doctor` as JSON (200 if all pass, else 503)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from novaberg.api.context import AppContext, Ctx
from novaberg.api.doctor import Check, check_health

router = APIRouter(tags=["health"])

CACHE_SECONDS = 5.0
"""A health result is reused this long: the check makes a real model call, and a
monitor polling every second must not turn into a model load test."""


class CheckOut(BaseModel):
    name: str
    ok: bool
    detail: str
    fix: str


class HealthOut(BaseModel):
    ok: bool
    checks: list[CheckOut]


@router.get(
    "/health",
    response_model=HealthOut,
    responses={503: {"model": HealthOut, "description": "at least one check failed"}},
    summary="Redis, PostgreSQL, chat model and embeddings, each with a fix if it fails",
)
async def health(request: Request, ctx: Ctx) -> JSONResponse:
    checks = await _cached_checks(request, ctx)
    body: dict[str, Any] = {
        "ok": all(c.ok for c in checks),
        "checks": [c.as_dict() for c in checks],
    }
    return JSONResponse(body, status_code=200 if body["ok"] else 503)


async def _cached_checks(request: Request, ctx: AppContext) -> list[Check]:
    state = request.app.state
    if not hasattr(state, "health_lock"):
        state.health_lock = asyncio.Lock()
        state.health_cache = None
    async with state.health_lock:  # concurrent requests share one run
        cached = state.health_cache
        if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
        checks = await check_health(
            ctx.settings, ctx.endpoints, model=ctx.model, redis=ctx.redis, pool=ctx.pool
        )
        state.health_cache = (time.monotonic(), checks)
        return checks
