"""A local push service, as a browser's would receive a Web Push request: it checks the
VAPID signature (RFC 8292: `Authorization: vapid t=<JWT>,k=<public key>`, ES256 over the
JWT, `aud` = this service's origin) and DECRYPTS the body with the device's private key and
auth secret (RFC 8291/8188, aes128gcm, via `http_ece`). A `Device` is what a browser keeps
for one subscription: a P-256 key pair and a 16-byte secret, made here with `cryptography`.
Tests read what each device got, or make a device answer 410 (gone) or 500 (transient)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import http_ece
import uvicorn
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from event_helpers import WAIT, free_port
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Device:
    """One browser subscription: its keys, and what arrived for it (decrypted)."""

    name: str
    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    auth: bytes = field(default_factory=lambda: os.urandom(16))
    received: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    answer: int = 201
    """What the service answers this device's pushes with (410: gone, 500: broken)."""
    failing: int = 0
    """The next this many pushes answer 500 first."""

    def subscription(self, service_url: str) -> dict[str, Any]:
        """What `pushManager.subscribe` hands the page (`PushSubscription.toJSON()`)."""
        point = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": f"{service_url}/push/{self.name}",
            "keys": {"p256dh": b64url(point), "auth": b64url(self.auth)},
        }


def verify_vapid(header: str, audience: str, server_key: str) -> dict[str, Any]:
    """The JWT's claims, once its ES256 signature checks out against `server_key` (the
    installation's public key) and its audience and expiry are right; else AssertionError."""
    scheme, _, params = header.partition(" ")
    assert scheme == "vapid", header
    fields = dict(part.split("=", 1) for part in params.split(","))
    assert fields["k"] == server_key, "signed with another key than the installation's"
    head, body, signature = fields["t"].split(".")
    raw = unb64url(signature)
    assert len(raw) == 64, "ES256 signatures are r||s, 64 bytes"
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(server_key))
    der = encode_dss_signature(int.from_bytes(raw[:32]), int.from_bytes(raw[32:]))
    try:
        public.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature as exc:
        raise AssertionError("VAPID signature does not verify") from exc
    assert json.loads(unb64url(head)) == {"typ": "JWT", "alg": "ES256"}
    claims: dict[str, Any] = json.loads(unb64url(body))
    assert claims["aud"] == audience, claims
    assert claims["exp"] > time.time(), claims
    assert str(claims["sub"]).startswith(("mailto:", "https://")), claims
    return claims


@dataclass
class PushService:
    url: str = ""
    server_key: str = ""
    """The installation's VAPID public key every request must be signed with."""
    devices: dict[str, Device] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    _arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    def device(self, name: str) -> Device:
        self.devices[name] = Device(name)
        return self.devices[name]

    async def wait_received(self, device: Device, count: int = 1) -> list[dict[str, Any]]:
        """The first `count` notifications the device got (a bound, not a measurement)."""
        async with self._arrived:
            await asyncio.wait_for(
                self._arrived.wait_for(lambda: len(device.received) >= count), WAIT
            )
        return device.received[:count]

    async def endpoint(self, request: Request) -> Response:
        device = self.devices.get(request.path_params["name"])
        if device is None:
            return Response(status_code=404)
        device.requests += 1
        body = await request.body()
        if device.failing:
            device.failing -= 1
            return Response(status_code=500)
        if device.answer >= 300:
            return Response(status_code=device.answer)
        try:
            verify_vapid(request.headers["authorization"], self.url, self.server_key)
            assert request.headers["content-encoding"] == "aes128gcm"
            assert int(request.headers["ttl"]) > 0, "a notification for an offline device waits"
            plain = http_ece.decrypt(
                body, private_key=device.key, auth_secret=device.auth, version="aes128gcm"
            )
        except Exception as exc:  # the test reads the problem, the sender sees a 400
            self.problems.append(repr(exc))
            return Response(status_code=400)
        async with self._arrived:
            device.received.append(json.loads(plain))
            self._arrived.notify_all()
        return Response(status_code=201)


@asynccontextmanager
async def running_push_service() -> AsyncIterator[PushService]:
    service = PushService()
    app = Starlette(routes=[Route("/push/{name}", service.endpoint, methods=["POST"])])
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    task = asyncio.create_task(server.serve())
    for _ in range(500):
        if server.started:
            break
        await asyncio.sleep(0.01)
    assert server.started, "the push service did not start"
    service.url = f"http://127.0.0.1:{port}"
    try:
        yield service
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 15)
