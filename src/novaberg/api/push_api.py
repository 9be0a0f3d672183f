"""A device's Web Push subscription (docs/behaviour/reach.md#web-push).

- `GET /kanaele/push/schluessel` — the installation's VAPID public key, the page's
  `applicationServerKey` for `pushManager.subscribe`
- `POST /kanaele/push/geraete` — store this device's subscription as the browser gave it
  (`endpoint`, `keys.p256dh`, `keys.auth`): from then on outcomes reach the device when no
  page of the person is open. Listed by `GET /kanaele` (`art: push`), revoked by
  `DELETE /kanaele/{id}` like a chat.

The keys are checked here (a P-256 point, a 16-byte secret), so a stored subscription can
always be encrypted for. The endpoint must be https — every browser's push service is —
or http on the loopback (a push service on the same machine; the tests' one).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel, Field, field_validator

from novaberg.api.auth import current_user
from novaberg.api.channels_api import LinkOut, link_out
from novaberg.api.context import Ctx
from novaberg.api.errors import AUTH, BODY
from novaberg.store import channel_links

router = APIRouter(tags=["kanaele"], responses={**AUTH})

User = Annotated[str, Depends(current_user)]

LOOPBACK_NAMES = frozenset({"localhost"})


def _b64url(value: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError) as exc:
        raise ValueError("not base64url") from exc


def _loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class SubscriptionKeys(BaseModel):
    p256dh: str = Field(max_length=128, description="The device's P-256 public key.")
    auth: str = Field(max_length=64, description="The 16-byte authentication secret.")

    @field_validator("p256dh")
    @classmethod
    def _point(cls, value: str) -> str:
        raw = _b64url(value)
        if len(raw) != 65 or raw[0] != 4:
            raise ValueError("p256dh must be an uncompressed P-256 point (65 bytes)")
        return value

    @field_validator("auth")
    @classmethod
    def _secret(cls, value: str) -> str:
        if len(_b64url(value)) != 16:
            raise ValueError("auth must be 16 bytes")
        return value


class SubscriptionIn(BaseModel):
    endpoint: str = Field(max_length=2048, description="The push service's URL for this device.")
    keys: SubscriptionKeys
    character_id: str | None = Field(
        default=None, max_length=64, description="Whom the page talked to (informational)."
    )

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        parts = urlsplit(value)
        host = parts.hostname or ""
        if not host or not (
            parts.scheme == "https" or (parts.scheme == "http" and _loopback(host))
        ):
            raise ValueError("endpoint must be an https URL (http only on the loopback)")
        return value


class PushKeyOut(BaseModel):
    schluessel: str = Field(description="VAPID public key, base64url (applicationServerKey).")


def _keys(request: Request) -> Any:
    reach = getattr(request.app.state, "reach", None)
    push = reach.sender.channels.get(channel_links.PUSH) if reach is not None else None
    if push is None:
        raise HTTPException(
            503, detail={"fehler": "nicht_bereit", "detail": "push is not available"}
        )
    return push.keys


@router.get("/kanaele/push/schluessel", response_model=PushKeyOut, summary="The server's push key")
async def get_key(request: Request, user_id: User) -> PushKeyOut:
    return PushKeyOut(schluessel=_keys(request).public_key)


@router.post(
    "/kanaele/push/geraete",
    status_code=201,
    response_model=LinkOut,
    responses=BODY,
    summary="Subscribe this device to notifications",
)
async def post_subscription(body: SubscriptionIn, user_id: User, ctx: Ctx) -> LinkOut:
    stored = json.dumps({"endpoint": body.endpoint, "keys": body.keys.model_dump()}, sort_keys=True)
    character = body.character_id or ctx.settings.character
    link = await channel_links.subscribe(
        ctx.pool, ctx.redis, user_id, stored, body.endpoint, character
    )
    return link_out(link)
