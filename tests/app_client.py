"""An HTTP client on the real app, signed in as one person, for the API tests.

The API tests of memory, imports, export and the page each need the same thing: the app
built on the test's Redis, PostgreSQL and scripted model, its lifespan running, and an
`httpx` client that carries a fresh token. One helper, so a change to how the app is built
(a new context field, a new start-up step) is made once. `tests/` is on the import path
through its conftest."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.api.app import create_app
from novaberg.api.context import AppContext
from novaberg.config import Settings
from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.runtime.services import Endpoints
from novaberg.store.users import issue_token


@asynccontextmanager
async def signed_in_client(
    settings: Settings,
    endpoints: Endpoints,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    *,
    user: str,
    gate: str,
    local_page: bool | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app as `user` (a token issued for it), the app's lifespan running.

    `gate` names the model gate of this app, so tests running side by side do not share
    slots; `local_page=False` makes the app treat requests as remote ones (the page's
    local sign-in off), `None` leaves the app's own decision."""
    ctx = AppContext(settings, endpoints, redis, db, model, ModelGate(redis, gate, 1))
    app = create_app(context=ctx)
    if local_page is not None:
        app.state.local_page = local_page
    token = (await issue_token(db, user, "test")).token
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://novaberg",
            headers={"Authorization": f"Bearer {token}"},
        ) as http,
    ):
        yield http
