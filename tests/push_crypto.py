"""What a browser keeps for one Web Push subscription, and what a push service checks.

A `Device` is one subscription: a P-256 key pair and a 16-byte auth secret, made here with
`cryptography`, and `subscription()` is what `pushManager.subscribe` hands the page.
`verify_vapid` checks a request's VAPID signature (RFC 8292: `Authorization: vapid
t=<JWT>,k=<public key>`, ES256 over the JWT, `aud` = the push service's origin) against the
installation's public key; `decrypt` opens the body with the device's private key and
secret (RFC 8291/8188, aes128gcm, via `http_ece`). Shared by the integration tests' push
service and the browser test."""

from __future__ import annotations

import base64
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


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


def decrypt(device: Device, body: bytes) -> bytes:
    """The plaintext of an aes128gcm push body sent to `device`."""
    return bytes(
        http_ece.decrypt(body, private_key=device.key, auth_secret=device.auth, version="aes128gcm")
    )
