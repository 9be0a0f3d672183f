"""The OpenAI-compatible door: `GET /v1/models` and `POST /v1/chat/completions`, so that
front-ends made for OpenAI's API (SillyTavern, Open WebUI, the `openai` package) can talk
to a character.

A completion is one turn of the normal conversation, not a stateless call: only the last
`user` message of the request is new to Nova; it goes through the same intake as
`POST /chat` (rate limit, validation, queue) and the call waits for that message's one
outcome — her `character_response` becomes the completion, a `turn_gescheitert` an
OpenAI-style error. The earlier messages are not stored again: Nova keeps her own memory
of the conversation. `model` names the character.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, model_validator
from starlette.types import Receive, Scope, Send

from novaberg.api.auth import current_user
from novaberg.api.chat import ChatServices, Reply, authorize, enqueue, rate_refusal
from novaberg.api.context import AppContext, get_context
from novaberg.api.door_resend import regenerate_if_resent
from novaberg.api.door_task_answer import answer_task
from novaberg.api.door_tasks import BackgroundTask, recognize
from novaberg.api.door_usage import usage
from novaberg.api.errors import AUTH, BODY
from novaberg.api.fields import NOT_BLANK
from novaberg.api.outcome_watch import Seen, Watch, WatchLost, watch_user
from novaberg.events import outcomes
from novaberg.events.delivery import TooManyConnections
from novaberg.events.intake import Accepted
from novaberg.events.model import MAX_PROMPT_BYTES
from novaberg.events.worker import any_worker_alive
from novaberg.llm.errors import ModelError
from novaberg.pair import Pair
from novaberg.reach.origins import answered_here
from novaberg.store import character_activation, characters
from novaberg.wire import MSG_RESPONSE

log = logging.getLogger(__name__)

router = APIRouter(tags=["openai"])

OWNER: Final = "novaberg"
SSE_HEADERS: Final = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
DISCONNECT_POLL: Final = 1.0
"""Seconds between checks whether a waiting (non-streaming) client is still there."""

FAILURE_STATUS: Final = {
    outcomes.GATE_TIMEOUT: 503,
    outcomes.WORKER_DIED: 503,
    outcomes.WORKER_STOPPED: 503,
    outcomes.REDIS_UNAVAILABLE: 503,
    outcomes.RUN_STRANDED: 503,
    outcomes.MODEL_TIMEOUT: 504,
    outcomes.MODEL_UNAVAILABLE: 502,
    outcomes.MODEL_OUTPUT: 502,
    outcomes.NO_ANSWER: 502,
    "modell_kontext_ueberschritten": 502,  # the prompt outgrew the model's context
    outcomes.PAUSED: 409,  # paused after the message was queued, and not activated
}
"""HTTP status of a failed turn by the code its `grund` starts with: the service is busy
or went away (503), the model timed out (504) or failed (502); any other code
(`fehler_im_knoten`, `ereignis_ungueltig`) is a 500."""

ERROR_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


# --- request ----------------------------------------------------------------------------


class TextPart(BaseModel):
    """A text part of a message's content list."""

    model_config = ConfigDict(extra="allow")

    type: Literal["text"]
    text: PromptText


PromptText = Annotated[
    str,
    WithJsonSchema({"type": "string", "pattern": NOT_BLANK, "maxLength": MAX_PROMPT_BYTES}),
]
"""A prompt as the schema states it; the intake checks it and answers with its own codes."""


class UserMessage(BaseModel):
    """A message of the person; only the last one of a request reaches Nova."""

    model_config = ConfigDict(extra="allow")

    role: Literal["user"]
    content: PromptText | Annotated[list[TextPart], Field(min_length=1)] = Field(
        description="Text (≤ 16 KiB UTF-8, not blank, no NUL) or a list of text parts."
    )

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(part.text for part in self.content)


class OtherMessage(BaseModel):
    """Any other message of the request (system prompt, earlier answers, tool output):
    accepted and not used — Nova has her own memory and her own character."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "assistant", "tool", "function"]
    content: Any = None


Message = Annotated[UserMessage | OtherMessage, Field(discriminator="role")]


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class CompletionRequest(BaseModel):
    """Body of `POST /v1/chat/completions`; fields not listed (temperature, max_tokens, …)
    are accepted and ignored: Nova's turn decides how she answers."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(
        min_length=1,
        max_length=64,
        description="The character's id (see GET /v1/models).",
        examples=["nova"],
    )
    messages: list[Message] = Field(
        min_length=1,
        description="The conversation as the client keeps it; only the last `user` "
        "message is new to Nova.",
        examples=[[{"role": "user", "content": "Hallo Nova!"}]],
        json_schema_extra={
            "contains": {"type": "object", "properties": {"role": {"const": "user"}}},
        },
    )
    stream: bool = Field(default=False, description="Answer as server-sent events.")
    stream_options: StreamOptions | None = Field(
        default=None, description="With `include_usage`, the stream ends with a `usage` chunk."
    )

    @model_validator(mode="after")
    def _has_user_message(self) -> CompletionRequest:
        if self.last_user_message() is None:
            raise ValueError("messages: no message with role 'user'")
        return self

    def last_user_message(self) -> UserMessage | None:
        return next((m for m in reversed(self.messages) if isinstance(m, UserMessage)), None)


# --- responses (documentation and the shapes built below) --------------------------------


class OpenAIErrorBody(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = Field(
        default=None, description="Novaberg's code: the intake's `fehler` or the failed turn's."
    )


class OpenAIError(BaseModel):
    error: OpenAIErrorBody


class AssistantMessage(BaseModel):
    role: Literal["assistant"]
    content: str


class Choice(BaseModel):
    index: int
    message: AssistantMessage
    finish_reason: Literal["stop"]


class TurnRef(BaseModel):
    nachrichten_id: str
    turn_id: str


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[Choice]
    usage: Usage = Field(description="The exchange's tokens, estimated (api/door_usage.py).")
    novaberg: TurnRef | None = Field(
        default=None,
        description="The utterance and the turn that answered it (absent for a front-end's "
        "background task, which is no turn: api/door_tasks.py).",
    )


class ModelCard(BaseModel):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str
    name: str


class ModelList(BaseModel):
    object: Literal["list"]
    data: list[ModelCard]


def _error_doc(text: str) -> dict[str, Any]:
    return {"model": OpenAIError, "description": text}


DOOR_AUTH: dict[int | str, dict[str, Any]] = {
    status: _error_doc(str(doc["description"])) for status, doc in AUTH.items()
}
"""The shared auth answers, in OpenAI's shape at this door (api/door_errors.py)."""

COMPLETION_RESPONSES: dict[int | str, dict[str, Any]] = {
    **DOOR_AUTH,
    **{status: {**doc, "model": OpenAIError} for status, doc in BODY.items()},
    422: _error_doc(
        "anfrage_ungueltig: the body does not match the schema (`param` names the field)"
    ),
    200: {
        "description": "Nova's answer: a `chat.completion`, or with `stream: true` "
        "server-sent `chat.completion.chunk` events ending with `data: [DONE]` (a turn "
        "that fails after the stream began ends it with an `error` event).",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    },
    400: _error_doc(
        "text_leer / text_ungueltig: the user message is blank or holds NUL; "
        "utf8_ungueltig, zu_tief (from the request guard)",
    ),
    404: _error_doc("charakter_unbekannt: no character of that id"),
    409: _error_doc(
        "charakter_pausiert: the caller paused this character (nothing was queued; "
        "POST /characters/{id}/activate)"
    ),
    413: _error_doc("text_zu_lang: the user message is over 16 KiB (or the body over 1 MiB)"),
    429: {
        **_error_doc(
            "zu_viele_anfragen: over the token's rate (see Retry-After); zu_viele_verbindungen: "
            "the user holds as many connections as allowed"
        ),
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    },
    500: _error_doc("the turn failed in a node (fehler_im_knoten, ereignis_ungueltig)"),
    502: _error_doc(
        "the model failed (modell_nicht_erreichbar, modell_ausgabe_unlesbar, keine_antwort)"
    ),
    503: _error_doc(
        "kein_worker: no worker runs to answer (nothing was queued); gate_timeout, "
        "worker_ausgefallen, worker_beendet: the turn failed; speicher_nicht_erreichbar"
    ),
    504: _error_doc(
        "modell_timeout: the model timed out; zeitueberschreitung: no outcome within "
        "NOVABERG_DOOR_TIMEOUT (the answer still arrives over the WebSocket)"
    ),
}


# --- answers ------------------------------------------------------------------------------


def openai_error(
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
) -> Response:
    kind = ERROR_TYPES.get(status, "timeout" if status == 504 else "server_error")
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return Response(
        json.dumps(body, ensure_ascii=False),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def _from_reply(reply: Reply) -> Response:
    """An intake refusal (`{"fehler", "detail"}`) in OpenAI's error shape: the same status,
    except that a refused text is a 400 as OpenAI's invalid requests are (the 422 of this
    route is the body's schema check)."""
    data = json.loads(reply.body)
    status = 400 if reply.status == 422 else reply.status
    return openai_error(status, str(data["fehler"]), str(data["detail"]), dict(reply.headers))


def failure_code(reason: str) -> str:
    """The code a `grund` starts with (`modell_timeout (nach responder)` → `modell_timeout`)."""
    return reason.split(" ", 1)[0].split(":", 1)[0].split("(", 1)[0]


def failure_status(reason: str) -> int:
    return FAILURE_STATUS.get(failure_code(reason), 500)


NO_RETRY: Final = {"x-should-retry": "false"}
REVOKED_WHILE_WAITING: Final = "the token was revoked while the answer was awaited"
"""On a failed turn: the message was accepted and answered; sending it again is the
person's choice, not the client library's (the `openai` package obeys this header)."""


def _failed(message: dict[str, Any]) -> Response:
    reason = str(message.get("grund", ""))
    return openai_error(
        failure_status(reason), failure_code(reason), f"the turn failed: {reason}", NO_RETRY
    )


def _timed_out(timeout: float) -> Response:
    return openai_error(
        504,
        "zeitueberschreitung",
        f"no answer within {timeout:g} s; it will still arrive over the WebSocket",
        NO_RETRY,
    )


def completion(
    character_id: str, accepted: Accepted, message: dict[str, Any], prompt: str
) -> dict[str, Any]:
    answer = str(message.get("nachricht", ""))
    return {
        "id": f"chatcmpl-{accepted.message_id}",
        "object": "chat.completion",
        "created": int(accepted.received_at),
        "model": character_id,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer},
                "finish_reason": "stop",
            }
        ],
        "usage": usage(prompt, answer),
        "novaberg": {
            "nachrichten_id": accepted.message_id,
            "turn_id": str(message.get("turn_id", "")),
        },
    }


def _chunk(character_id: str, accepted: Accepted, delta: dict[str, Any], finish: str | None) -> str:
    body = {
        "id": f"chatcmpl-{accepted.message_id}",
        "object": "chat.completion.chunk",
        "created": int(accepted.received_at),
        "model": character_id,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


def _usage_chunk(character_id: str, accepted: Accepted, prompt: str, answer: str) -> str:
    """The last chunk when the client asked for `stream_options.include_usage`: no choices,
    the exchange's `usage` (as OpenAI sends it)."""
    body = {
        "id": f"chatcmpl-{accepted.message_id}",
        "object": "chat.completion.chunk",
        "created": int(accepted.received_at),
        "model": character_id,
        "choices": [],
        "usage": usage(prompt, answer),
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


def _error_event(code: str, message: str) -> str:
    body = {"error": {"message": message, "type": "server_error", "param": None, "code": code}}
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


# --- routes -------------------------------------------------------------------------------


@router.get(
    "/v1/models",
    response_model=ModelList,
    responses=DOOR_AUTH,
    summary="The characters, as OpenAI models",
)
async def models(
    user_id: Annotated[str, Depends(current_user)],
    ctx: Annotated[AppContext, Depends(get_context)],
) -> dict[str, Any]:
    """Every character the caller can talk to (their own and the shared ones); its id is
    the `model` of a completion."""
    async with ctx.pool.connection() as conn:
        rows = await characters.list_visible(conn, user_id, limit=None)
    return {
        "object": "list",
        "data": [
            {
                "id": row.character_id,
                "object": "model",
                "created": int(row.created_at.timestamp()),
                "owned_by": OWNER,
                "name": row.name,
            }
            for row in rows
        ],
    }


@router.post(
    "/v1/chat/completions",
    response_model=ChatCompletion,
    responses=COMPLETION_RESPONSES,
    summary="One turn with a character, answered in OpenAI's chat-completion format",
)
async def chat_completions(
    request: Request,
    req: CompletionRequest,
    _user: Annotated[str, Depends(current_user)],
) -> Response:
    """The last `user` message is queued like `POST /chat`; the call returns Nova's answer
    to it (or streams it with `stream: true`), or an OpenAI-style error when the turn
    fails. Earlier messages are not stored again."""
    services: ChatServices = request.app.state.chat
    ctx: AppContext = request.app.state.context
    who = await authorize(request.app.state, request.headers.get("authorization"))
    if isinstance(who, Reply):
        return _from_reply(who)
    user_id, token_key = who
    refused = rate_refusal(services, token_key)
    if refused is not None:
        return _from_reply(refused)
    user_message = req.last_user_message()
    assert user_message is not None  # the model's validator
    if not await services.intake.characters.known(user_id, req.model):
        return openai_error(404, "charakter_unbekannt", f"unknown model {req.model!r}")
    if ctx.settings.door_task_recognition:
        task = recognize([m.model_dump() for m in req.messages])
        if task is not None:
            return await _answer_task(ctx, req, task)
    if not await any_worker_alive(ctx.redis):
        return openai_error(
            503, "kein_worker", "no worker is running to answer; nothing was queued"
        )
    if await character_activation.is_paused(ctx.pool, Pair(user_id, req.model)):
        # a paused character answers only once activated: a call that waits for the answer
        # is told at once instead of waiting out NOVABERG_DOOR_TIMEOUT
        return openai_error(
            409,
            outcomes.PAUSED,
            f"you paused {req.model!r}; activate it first (POST /characters/{req.model}"
            "/activate); nothing was queued",
        )
    timeout = ctx.settings.door_timeout
    pair, messages = Pair(user_id, req.model), [m.model_dump() for m in req.messages]

    async def accept() -> Accepted | Reply:  # a resend is a regenerate (api/door_resend.py)
        again = await regenerate_if_resent(ctx.redis, ctx.pool, pair, messages)
        return again or await enqueue(services, user_id, req.model, user_message.text(), None)

    if req.stream:
        with_usage = req.stream_options is not None and req.stream_options.include_usage
        return await _stream(
            services,
            user_id,
            token_key,
            req.model,
            user_message.text(),
            timeout,
            with_usage,
            accept=accept,
        )
    try:
        async with watch_user(services.hub, user_id, token_key) as watch:
            accepted = await accept()
            if isinstance(accepted, Reply):
                return _from_reply(accepted)
            await answered_here(services.hub.redis, accepted.message_id)
            return await _answer(request, watch, req.model, accepted, timeout, user_message.text())
    except TooManyConnections:
        return _too_many_connections()


async def _answer_task(ctx: AppContext, req: CompletionRequest, task: BackgroundTask) -> Response:
    """A front-end's background task: one model call, answered in the completion's shape
    (streamed if asked), stored nowhere (api/door_tasks.py)."""
    extra = req.model_extra or {}
    asked = extra.get("max_completion_tokens") or extra.get("max_tokens")
    try:
        text = await answer_task(ctx, task, asked if isinstance(asked, int) else None)
    except ModelError as exc:
        reason = outcomes.reason_for(exc, f"task {task.kind}")
        return openai_error(failure_status(reason), failure_code(reason), reason, NO_RETRY)
    log.info("door: answered a %s task for %r without a turn", task.kind, req.model)
    prompt = task.messages[-1]["content"]
    ref = Accepted(message_id=f"task-{uuid.uuid4().hex}", received_at=time.time())
    if not req.stream:
        body = completion(req.model, ref, {"nachricht": text}, prompt)
        body.pop("novaberg")
        return Response(json.dumps(body, ensure_ascii=False), media_type="application/json")
    with_usage = req.stream_options is not None and req.stream_options.include_usage

    async def events() -> AsyncIterator[str]:
        yield _chunk(req.model, ref, {"role": "assistant", "content": ""}, None)
        yield _chunk(req.model, ref, {"content": text}, None)
        yield _chunk(req.model, ref, {}, "stop")
        if with_usage:
            yield _usage_chunk(req.model, ref, prompt, text)
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream", headers=SSE_HEADERS)


def _too_many_connections() -> Response:
    return openai_error(
        429,
        "zu_viele_verbindungen",
        "the user holds as many connections as allowed (NOVABERG_MAX_SOCKETS_PER_USER)",
        {"Retry-After": "1"},
    )


async def _answer(
    request: Request,
    watch: Watch,
    character_id: str,
    accepted: Accepted,
    timeout: float,
    prompt: str,
) -> Response:
    deadline = time.monotonic() + timeout
    checked = time.monotonic()
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            seen = await watch.next(accepted.message_id, min(remaining, DISCONNECT_POLL))
        except WatchLost as lost:
            if lost.revoked:
                return openai_error(401, "token_ungueltig", REVOKED_WHILE_WAITING)
            return openai_error(503, "nicht_bereit", "the server is shutting down", NO_RETRY)
        if seen is not None and seen.is_outcome:
            if seen.message.get("typ") == MSG_RESPONSE:
                return Response(
                    json.dumps(
                        completion(character_id, accepted, seen.message, prompt),
                        ensure_ascii=False,
                    ),
                    media_type="application/json",
                )
            return _failed(seen.message)
        if time.monotonic() - checked >= DISCONNECT_POLL:
            checked = time.monotonic()
            if await request.is_disconnected():
                log.info("a door client left before the answer to %s", accepted.message_id)
                return Response(status_code=499)
    return _timed_out(timeout)


async def _stream(
    services: ChatServices,
    user_id: str,
    token_key: str,
    character_id: str,
    text: str,
    timeout: float,
    with_usage: bool = False,
    accept: Callable[[], Awaitable[Accepted | Reply]] | None = None,
) -> Response:
    """Queue the message, then answer 200 with the event stream (refusals before that are
    plain HTTP errors)."""
    watching = watch_user(services.hub, user_id, token_key)
    try:
        watch = await watching.__aenter__()
    except TooManyConnections:
        return _too_many_connections()
    try:
        if accept is None:
            accepted = await enqueue(services, user_id, character_id, text, None)
        else:
            accepted = await accept()
    except BaseException:
        await watching.__aexit__(None, None, None)
        raise
    if isinstance(accepted, Reply):
        await watching.__aexit__(None, None, None)
        return _from_reply(accepted)
    await answered_here(services.hub.redis, accepted.message_id)

    async def events() -> AsyncIterator[str]:
        yield _chunk(character_id, accepted, {"role": "assistant", "content": ""}, None)
        usage_of = text if with_usage else None
        async for line in _stream_outcome(watch, character_id, accepted, timeout, usage_of):
            yield line
        yield "data: [DONE]\n\n"

    async def release() -> None:
        await watching.__aexit__(None, None, None)

    return WatchedStream(events(), release)


class WatchedStream(StreamingResponse):
    """The event stream, which lets go of the user's delivery stream however it ends —
    also when the client left before its first byte, so the generator never ran."""

    def __init__(self, content: AsyncIterator[str], release: Callable[[], Awaitable[None]]) -> None:
        super().__init__(content, media_type="text/event-stream", headers=SSE_HEADERS)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._release()


async def _stream_outcome(
    watch: Watch,
    character_id: str,
    accepted: Accepted,
    timeout: float,
    usage_of: str | None = None,
) -> AsyncIterator[str]:
    """The stream's body after the opening chunk: a comment per stage (the client shows
    nothing, a proxy sees the connection live), then the answer or an error event.
    `usage_of`: the prompt, when the client asked for a final `usage` chunk."""
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            seen: Seen | None = await watch.next(accepted.message_id, remaining)
        except WatchLost as lost:
            if lost.revoked:
                yield _error_event("token_ungueltig", REVOKED_WHILE_WAITING)
            else:
                yield _error_event("nicht_bereit", "the server is shutting down")
            return
        if seen is None:
            break
        message = seen.message
        if not seen.is_outcome:
            if message.get("character_id") == character_id:
                yield f": {str(message.get('label', '')).replace(chr(10), ' ')}\n\n"
            continue
        if message.get("typ") == MSG_RESPONSE:
            content = str(message.get("nachricht", ""))
            yield _chunk(character_id, accepted, {"content": content}, None)
            yield _chunk(character_id, accepted, {}, "stop")
            if usage_of is not None:
                yield _usage_chunk(character_id, accepted, usage_of, content)
        else:
            reason = str(message.get("grund", ""))
            yield _error_event(failure_code(reason), f"the turn failed: {reason}")
        return
    yield _error_event(
        "zeitueberschreitung",
        f"no answer within {timeout:g} s; it will still arrive over the WebSocket",
    )
