"""`POST /chat` (the intake), the chat page at `/`, and the chat services' lifespan.

The lifespan (nested inside the app's, so `app.state.context` exists) builds
the per-process chat services: token cache, intake, delivery hub, and — in
`novaberg serve` — a worker running both consumers in this process. On a
loopback bind it also makes sure the default user exists and hands the page
its token, so a newcomer on localhost is never asked for one.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cache
from html import escape
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from redis.exceptions import RedisError

from novaberg import bounded_json
from novaberg.api.auth import TokenCache, bearer_identity, current_identity
from novaberg.api.channel_intake import channel_reach
from novaberg.api.context import AppContext
from novaberg.api.error_sentences import with_sentence
from novaberg.api.errors import AUTH
from novaberg.api.fields import NOT_BLANK
from novaberg.api.rate_limit import RateLimiter, retry_after_header
from novaberg.api.revocation import RevocationWatch
from novaberg.config import PAGE_TOKEN_FILE
from novaberg.events.delivery import DeliveryHub
from novaberg.events.intake import (
    MAX_CLIENT_ID,
    Accepted,
    CharacterCache,
    Intake,
    IntakeError,
    intake_redis,
)
from novaberg.events.model import MAX_PROMPT_BYTES
from novaberg.events.worker import Worker, close_graphs, graph_runtime
from novaberg.runtime.heap import freeze_startup_heap
from novaberg.store.characters import load_visible_ids
from novaberg.store.failed_turns import FailedTurnLog
from novaberg.store.user_persona import load_persona
from novaberg.store.users import hash_token, issue_token, user_for_token

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
WEB_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".webmanifest": "application/manifest+json",
}
WEB_FILES = {p.name: WEB_TYPES[p.suffix] for p in WEB_DIR.iterdir() if p.suffix in WEB_TYPES}
"""The page's scripts, style sheet, icon and manifest: every such file next to index.html."""

ROOT_FILES = {"/sw.js": "sw.js", "/manifest.webmanifest": "manifest.webmanifest"}
"""Files the page needs at the root: a service worker controls only the paths under its
own (so /sw.js for the whole page), and the manifest sits beside it."""

MAX_BODY_BYTES = 128 * 1024
"""A 16 KiB text may grow up to 6x through JSON escapes; anything larger is refused unread."""

PAGE_TOKEN_LABEL = "seite"


class ChatRequest(BaseModel):
    """Body of `POST /chat`."""

    model_config = ConfigDict(extra="forbid")

    character_id: str = Field(min_length=1, max_length=64, examples=["nova"])
    # the limits are stated in the schema and checked by the intake (events/intake.py),
    # which answers with its own codes (text_leer, text_ungueltig, text_zu_lang, ...)
    text: str = Field(
        description="The utterance; ≤ 16 KiB UTF-8, not blank, no NUL.",
        json_schema_extra={"maxLength": MAX_PROMPT_BYTES, "pattern": NOT_BLANK},
    )
    client_id: str | None = Field(
        default=None,
        description="Optional id of the sending tab/device (1-64 chars).",
        json_schema_extra={"minLength": 1, "maxLength": MAX_CLIENT_ID},
    )


class ChatAccepted(BaseModel):
    nachrichten_id: str
    empfangen_am: float


class ChatError(BaseModel):
    fehler: str
    detail: str
    meldung: str | None = Field(
        default=None, description="The same as a sentence (Accept-Language; German by default)."
    )


@dataclass
class ChatServices:
    tokens: TokenCache
    intake: Intake
    hub: DeliveryHub
    page_token: str | None
    worker: Worker | None
    limiter: RateLimiter


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _local_visitor(request: Request) -> bool:
    """A browser on this machine talking to us directly: loopback peer, loopback Host, and
    no proxy headers (behind a reverse proxy every peer looks local)."""
    client = request.client.host if request.client else None
    if not _is_loopback(client):
        return False
    if "x-forwarded-for" in request.headers or "forwarded" in request.headers:
        return False
    host = request.headers.get("host", "")
    hostname = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
    return _is_loopback(hostname)


async def local_page_token(ctx: AppContext) -> str:
    """The default user's page token, kept on disk so an open tab survives a restart. A
    token on disk that no longer exists was revoked (or the database is new): it is never
    brought back; a new one replaces it."""
    settings = ctx.settings
    path = settings.home.expanduser() / PAGE_TOKEN_FILE
    token = path.read_text().strip() if path.exists() else ""
    if token:
        owner = await user_for_token(ctx.pool, token)
        if owner == settings.default_user:
            return token
        if owner is not None:
            log.info(
                "the page token is %s's; NOVABERG_DEFAULT_USER is now %s",
                owner,
                settings.default_user,
            )
    issued = await issue_token(ctx.pool, settings.default_user, PAGE_TOKEN_LABEL)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(issued.token)
    log.info("created the page token for user %s", settings.default_user)
    return issued.token


@asynccontextmanager
async def chat_lifespan(app: FastAPI) -> AsyncIterator[None]:
    ctx: AppContext = app.state.context
    tokens = TokenCache(ctx.pool)
    hub = DeliveryHub(
        ctx.redis,
        max_per_user=ctx.settings.max_sockets_per_user,
        buffer_bytes=ctx.settings.socket_buffer_bytes,
    )
    revocations = hub.revocations = RevocationWatch(tokens, hub, ctx.pool)
    await hub.start()
    intake_client = intake_redis(ctx.endpoints.redis_url, cluster=ctx.endpoints.redis_cluster)
    page_token = None
    if _is_loopback(ctx.settings.host) and getattr(app.state, "local_page", True):
        page_token = await local_page_token(ctx)
    worker = None
    graphs = None
    if getattr(app.state, "run_consumers", False):
        try:
            graphs = graph_runtime(ctx.settings, ctx.redis, ctx.pool, ctx.model)
        except ImportError as exc:
            log.error("consumers not started: the graphs are not available (%s)", exc)
        else:
            worker = Worker(ctx.redis, graphs, ctx.gate, failures=FailedTurnLog(ctx.pool))
            await worker.start()
    app.state.token_cache = tokens
    app.state.chat = ChatServices(
        tokens=tokens,
        intake=Intake(intake_client, CharacterCache(lambda u: load_visible_ids(ctx.pool, u))),
        hub=hub,
        page_token=page_token,
        worker=worker,
        limiter=RateLimiter(ctx.settings.chat_rate, ctx.settings.chat_burst),
    )
    reach = app.state.reach = channel_reach(ctx.settings, ctx.redis, ctx.pool, app.state.chat)
    await reach.start()
    if getattr(app.state, "freeze_heap", False):  # the innermost lifespan: all is built now
        freeze_startup_heap()
    try:
        yield
    finally:
        await reach.stop()
        if worker is not None:
            await worker.stop()
        if graphs is not None:
            await close_graphs(graphs)
        await hub.stop()
        await revocations.stop()
        await intake_client.aclose()


router = APIRouter(lifespan=chat_lifespan)


@dataclass(frozen=True)
class Reply:
    """An intake answer, independent of the framework that sends it."""

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()

    def response(self) -> Response:
        return Response(
            self.body,
            status_code=self.status,
            media_type="application/json",
            headers=dict(self.headers),
        )


def error_reply(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> Reply:
    detail = with_sentence({"fehler": code, "detail": message})
    body = json.dumps(detail, ensure_ascii=False).encode("utf-8")
    return Reply(status, body, tuple((headers or {}).items()))


def _body_error(body: bytes, exc: ValidationError) -> Reply:
    err = exc.errors()[0]
    if err["type"] == "json_invalid":
        try:
            body.decode("utf-8")
            bounded_json.loads(body)
        except UnicodeDecodeError:
            return error_reply(400, "utf8_ungueltig", "the body is not valid UTF-8")
        except ValueError:
            return error_reply(400, "json_ungueltig", f"the body is not JSON: {err['msg']}")
        return error_reply(400, "utf8_ungueltig", "text contains an unpaired surrogate (not UTF-8)")
    where = ".".join(str(p) for p in err.get("loc", ())) or "body"
    return error_reply(422, "eingabe_ungueltig", f"{where}: {err['msg']}")


async def authorize(app_state: Any, authorization: str | None) -> tuple[str, str] | Reply:
    """(user, token digest) of the bearer header, or the 401/503 reply. Runs before the body
    is read: a request without a valid token never costs the server its body."""
    try:
        return await bearer_identity(app_state, authorization)
    except HTTPException as exc:
        detail: dict[str, Any] = exc.detail if isinstance(exc.detail, dict) else {}
        return error_reply(
            exc.status_code, str(detail.get("fehler")), str(detail.get("detail")), exc.headers
        )


async def chat_reply(app_state: Any, authorization: str | None, body: bytes) -> Reply:
    """`POST /chat` with its body read (the documented route's path)."""
    who = await authorize(app_state, authorization)
    if isinstance(who, Reply):
        return who
    return await accept_body(app_state, who[0], who[1], body)


def rate_refusal(services: ChatServices, token_key: str) -> Reply | None:
    """The 429 for a token over its rate (one message taken from its bucket otherwise)."""
    wait = services.limiter.retry_after(token_key)
    if not wait:
        return None
    return error_reply(
        429,
        "zu_viele_anfragen",
        f"more than {services.limiter.burst:g} messages at once or "
        f"{services.limiter.rate:g} per second; not accepted",
        {"Retry-After": retry_after_header(wait)},
    )


async def enqueue(
    services: ChatServices, user_id: str, character_id: str, text: str, client_id: str | None
) -> Accepted | Reply:
    """Hand one utterance to the intake: its receipt, or the refusal (nothing queued)."""
    try:
        return await services.intake.accept(user_id, character_id, text, client_id)
    except IntakeError as exc:
        return error_reply(exc.status, exc.code, exc.message)
    except (RedisError, TimeoutError) as exc:
        log.error("intake could not store an utterance: %r", exc)
        return error_reply(
            503, "speicher_nicht_erreichbar", "the queue is unavailable; not accepted"
        )


async def accept_body(app_state: Any, user_id: str, token_key: str, body: bytes) -> Reply:
    """`POST /chat` after auth: rate limit, validate, stamp, enqueue, answer — no model call,
    no waiting (docs/behaviour/events.md#intake). Served by the raw ASGI path
    (api/fast_chat.py) and by the documented route."""
    services: ChatServices = app_state.chat
    refused = rate_refusal(services, token_key)
    if refused is not None:
        return refused
    if len(body) > MAX_BODY_BYTES:
        return error_reply(413, "text_zu_lang", f"the body exceeds {MAX_BODY_BYTES} bytes")
    try:
        bounded_json.check_depth(body)  # two byte counts for any ordinary body
    except bounded_json.TooDeep as exc:
        return error_reply(400, "zu_tief", str(exc))
    try:
        req = ChatRequest.model_validate_json(body)
    except ValidationError as exc:
        return _body_error(body, exc)
    accepted = await enqueue(services, user_id, req.character_id, req.text, req.client_id)
    if isinstance(accepted, Reply):
        return accepted
    content = b'{"nachrichten_id":"%s","empfangen_am":%s}' % (
        accepted.message_id.encode(),
        repr(accepted.received_at).encode(),
    )
    return Reply(202, content)


_CHAT_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": ChatRequest.model_json_schema()}},
    }
}


@router.post(
    "/chat",
    status_code=202,
    response_model=ChatAccepted,
    responses={
        400: {"model": ChatError, "description": "utf8_ungueltig / json_ungueltig / zu_tief"},
        401: {"model": ChatError, "description": "token_fehlt / token_ungueltig"},
        404: {"model": ChatError, "description": "charakter_unbekannt"},
        408: {"model": ChatError, "description": "zeitueberschreitung: the body came too late"},
        413: {"model": ChatError, "description": "text_zu_lang"},
        422: {"model": ChatError, "description": "text_leer / text_ungueltig / ..."},
        429: {
            "model": ChatError,
            "description": "zu_viele_anfragen: over the token's rate (see Retry-After)",
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
        },
        500: {"model": ChatError, "description": "interner_fehler"},
        503: {"model": ChatError, "description": "speicher_nicht_erreichbar / nicht_bereit"},
    },
    openapi_extra={**_CHAT_BODY, "security": [{"bearer": []}]},
    summary="Accept an utterance; the answer arrives over the WebSocket",
)
async def post_chat(request: Request) -> Response:
    """Validate, stamp, enqueue, answer — `202 {nachrichten_id, empfangen_am}` in
    milliseconds; Nova's answer arrives over `GET /ws`. (This entry documents the
    endpoint; the app answers `POST /chat` before routing, api/fast_chat.py.)"""
    body = await request.body()
    reply = await chat_reply(request.app.state, request.headers.get("authorization"), body)
    return reply.response()


# --- the chat page -----------------------------------------------------------------------


@cache
def _web_file(name: str) -> bytes:
    return (WEB_DIR / name).read_bytes()


@router.get("/", include_in_schema=False)
async def page(request: Request) -> HTMLResponse:
    """The chat page; on a loopback bind, loopback visitors get the local token built in."""
    html = _web_file("index.html").decode("utf-8")
    services: ChatServices | None = getattr(request.app.state, "chat", None)
    token = ""
    if services is not None and services.page_token and _local_visitor(request):
        token = services.page_token
    settings = request.app.state.context.settings
    html = html.replace("{{TOKEN}}", escape(token)).replace(
        "{{CHARACTER}}", escape(settings.character)
    )
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


@router.get("/sw.js", include_in_schema=False)
@router.get("/manifest.webmanifest", include_in_schema=False)
async def root_file(request: Request) -> Response:
    """The service worker and the manifest (docs/behaviour/reach.md#the-installable-page);
    never cached, so a new version of the worker reaches the browser on its next check."""
    name = ROOT_FILES[request.url.path]
    return Response(
        _web_file(name), media_type=WEB_FILES[name], headers={"Cache-Control": "no-cache"}
    )


@router.get("/web/{name}", include_in_schema=False)
async def web_file(name: str) -> Response:
    if name not in WEB_FILES:
        return error_reply(404, "nicht_gefunden", f"no such file {name!r}").response()
    return Response(_web_file(name), media_type=WEB_FILES[name])


@router.get("/chat/me", summary="Who the token belongs to", responses=AUTH)
async def me(
    request: Request, identity: tuple[str, str] = Depends(current_identity)
) -> dict[str, object]:
    """The token's user, its delivery position, whether this is the local page token
    (`lokal`: the loopback page's single user, no key needed) and the name the person goes
    by (`name`: the persona's, else the user id; docs/behaviour/web.md#who-you-are)."""
    user_id, digest = identity
    services: ChatServices = request.app.state.chat
    persona = await load_persona(request.app.state.context.pool, user_id)
    return {
        "user_id": user_id,
        "seq_aktuell": await services.hub.delivery.current_seq(user_id),
        "lokal": bool(services.page_token) and digest == hash_token(services.page_token or ""),
        "name": persona.name if persona is not None and persona.name else user_id,
    }
