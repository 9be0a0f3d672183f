"""`POST /telegram/webhook`: Telegram's updates when the webhook option is on
(`NOVABERG_TELEGRAM_WEBHOOK_URL`; docs/behaviour/reach.md#telegram). Any API process takes
them; each is checked against the secret Telegram was given, handled once (Telegram repeats
a post it saw fail: `telegram_update:{id}` drops the repeat) and answered 200 at once —
the update's work is the intake's, which never waits for a model. The request guard lets
this path through unguarded (no bearer token: Telegram has none); the secret is checked
here before the body is read, and a body is at most `MAX_UPDATE_BYTES`."""

from __future__ import annotations

import hmac
import logging
from typing import Any

from fastapi import APIRouter, Request, Response
from telegram import Update

from novaberg import bounded_json
from novaberg.reach.lead import WEBHOOK_PATH
from novaberg.store import keys

log = logging.getLogger(__name__)

router = APIRouter(include_in_schema=False)

SECRET_HEADER = "x-telegram-bot-api-secret-token"

MAX_UPDATE_BYTES = 1024 * 1024
"""A text message's update is a few KiB; anything near this is not one."""


@router.post(WEBHOOK_PATH)
async def telegram_webhook(request: Request) -> Response:
    reach: Any = getattr(request.app.state, "reach", None)
    if reach is None or not reach.webhook_url:
        return Response(status_code=404)
    given = request.headers.get(SECRET_HEADER, "")
    if not hmac.compare_digest(given.encode(), reach.webhook_secret.encode()):
        return Response(status_code=401)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_UPDATE_BYTES:
            return Response(status_code=413)
    try:
        update = Update.de_json(bounded_json.loads(body), reach.bot)
    except Exception as exc:
        log.warning("telegram webhook: unreadable update (%s)", exc)
        return Response(status_code=400)
    seen = keys.telegram_update(update.update_id)
    if await reach.redis.set(seen, "1", nx=True, ex=keys.TELEGRAM_UPDATE_TTL):
        try:
            await reach.poller.handle(update)
        except Exception:
            await reach.redis.delete(seen)  # Telegram posts it again
            log.exception("telegram update %d not handled", update.update_id)
            return Response(status_code=500)
    return Response(status_code=200)
