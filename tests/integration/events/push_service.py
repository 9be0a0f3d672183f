"""A local push service, as a browser's would receive a Web Push request: it checks the
VAPID signature and DECRYPTS the body with the device's private key and auth secret
(tests/push_crypto.py). Tests read what each device got, or make a device answer 410
(gone) or 500 (transient)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from event_helpers import WAIT, free_port
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from push_crypto import Device, decrypt, verify_vapid


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
            plain = decrypt(device, body)
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
