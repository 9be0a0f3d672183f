"""The FastAPI app factory. Tests, `novaberg serve` and external ASGI servers
(`uvicorn --factory novaberg.api.app:create_app`) all build the app here.

Routers live in their own modules and are listed in `ROUTERS`; a new endpoint
family (chat, WebSocket, admin, ...) adds its router there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from novaberg import __version__
from novaberg.agents.registry import agent_migrations
from novaberg.api import (
    agents_api,
    channels_api,
    character_editor,
    characters_api,
    chat,
    chats_api,
    errors,
    export_api,
    greeting_api,
    health,
    identity_api,
    imported_history,
    imports_api,
    library_api,
    memory,
    memory_search,
    model_api,
    openai_door,
    page_api,
    push_api,
    telegram_webhook,
    tokens_api,
    turns_api,
    ws,
)
from novaberg.api.context import AppContext, cancel_quietly
from novaberg.api.door_errors import DoorErrors
from novaberg.api.fast_chat import is_chat_post, serve_chat
from novaberg.api.import_gate import ImportGate
from novaberg.api.request_guard import RequestGuard
from novaberg.api.request_language import set_from_scope as set_request_language
from novaberg.api.security_headers import SecurityHeaders
from novaberg.config import Settings, load_settings
from novaberg.impulses import routes as impulses_routes
from novaberg.memory.library.progress import stop_passes
from novaberg.reach.lead import WEBHOOK_PATH
from novaberg.runtime.services import EmbeddedServices, Endpoints

log = logging.getLogger(__name__)

ROUTERS: list[APIRouter] = [
    health.router,
    chat.router,
    ws.router,
    memory.router,
    memory_search.router,
    model_api.router,
    export_api.router,
    library_api.router,
    agents_api.router,
    imports_api.router,
    characters_api.router,
    character_editor.router,
    greeting_api.router,
    imported_history.router,
    openai_door.router,
    page_api.router,
    chats_api.router,
    impulses_routes.router,
    tokens_api.router,
    identity_api.router,
    channels_api.router,
    push_api.router,
    telegram_webhook.router,
    turns_api.router,
]
"""Every router the app serves, in order."""


class NovabergApp(FastAPI):
    """FastAPI, except that `POST /chat` is answered before the framework's middleware
    and routing (api/fast_chat.py: the intake's latency goal)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        set_request_language(scope)  # the language of every sentence this answer carries
        if is_chat_post(scope):
            await serve_chat(self.state, scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    def build_middleware_stack(self) -> ASGIApp:
        """The security headers wrap everything, the framework's own 500 answer included;
        inside them, the door's errors take OpenAI's shape (api/door_errors.py)."""
        return SecurityHeaders(DoorErrors(super().build_middleware_stack()))


def create_app(
    settings: Settings | None = None,
    *,
    endpoints: Endpoints | None = None,
    context: AppContext | None = None,
    consumers: bool = False,
    freeze_heap: bool = False,
) -> FastAPI:
    """Build the app.

    - `context` given: use it as is; its owner opens and closes it (tests).
    - `endpoints` given: connect to those Redis/PostgreSQL URLs; start nothing.
    - neither: the lifespan starts (or reuses) the embedded services and stops
      what it started on shutdown.

    `consumers`: also run the prompt and event consumers in this process
    (`novaberg serve`); `novaberg api` and tests leave them to separate workers.

    `freeze_heap`: once started, hide the startup heap from the garbage collector
    (`runtime.heap.freeze_startup_heap`); for server processes, not for tests that build
    many apps in one process.
    """
    if context is not None:
        settings = context.settings
    settings = settings or load_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if context is not None:
            app.state.context = context
            try:
                yield
            finally:
                await stop_passes()
            return
        services: EmbeddedServices | None = None
        resolved = endpoints
        if resolved is None:
            services = EmbeddedServices(settings, extra_migrations=agent_migrations())
            resolved = await asyncio.to_thread(services.start)
        try:
            ctx = await AppContext.open(settings, resolved)
        except BaseException:
            if services is not None:
                await asyncio.to_thread(services.stop)
            raise
        app.state.context = ctx
        warm_up = asyncio.create_task(ctx.warm_up())
        try:
            yield
        finally:
            await stop_passes()  # library passes started by requests (they resume later)
            await cancel_quietly(warm_up)
            await ctx.aclose()
            if services is not None:
                await asyncio.to_thread(services.stop)

    app = NovabergApp(
        title="Novaberg",
        version=__version__,
        description="Self-hosted companion-chat server: chat with a character that "
        "perceives, remembers, acts and writes on its own.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.run_consumers = consumers
    app.state.freeze_heap = freeze_heap
    # not on POST /chat, which never reaches the framework; uploads have their own limits
    app.add_middleware(
        RequestGuard,
        limits=imports_api.body_limits(settings),
        binary=imports_api.BINARY_PATHS,
        json_lines=imports_api.JSON_LINES_PATHS,
        own_auth=frozenset({WEBHOOK_PATH}),
    )
    # outside the guard: an import's slot is taken before its body is read
    app.add_middleware(ImportGate, paths=imports_api.IMPORT_PATHS, limits=imports_api.body_limits)
    for router in ROUTERS:
        app.include_router(router)
    errors.install(app)
    return app
