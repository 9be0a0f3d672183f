"""The installation's VAPID key pair (RFC 8292): made once, kept in the data directory.

A browser subscribes for pushes under the server's public key (`applicationServerKey`)
and its push service accepts only requests signed with the matching private key. So the
pair must outlive restarts and be the same for every API process of the installation: it
lives in `NOVABERG_HOME/vapid_private.pem` (mode 0600, only the server's user reads it).
Losing it orphans every subscription (the push service answers 403: they are marked and
the person turns notifications on again).
"""

from __future__ import annotations

import base64
import contextlib
import os
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02

KEY_FILE: Final = "vapid_private.pem"


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


class VapidKeys:
    """The pair as pywebpush signs with it, and the public key as the page needs it."""

    def __init__(self, private_key: ec.EllipticCurvePrivateKey) -> None:
        self.vapid = Vapid02(private_key=private_key)
        point = private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        self.public_key: str = _b64url(point)
        """Base64url of the uncompressed P-256 point: the page's `applicationServerKey`."""


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def load_or_create(home: Path) -> VapidKeys:
    """The pair in `home`, made now if there is none. Two processes starting at once agree:
    each writes a temporary file and links it into place; the one that loses reads the
    winner's (a link either appears whole or not at all)."""
    path = home / KEY_FILE
    if not path.exists():
        home.mkdir(parents=True, exist_ok=True)
        tmp = home / f".{KEY_FILE}.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(_pem(ec.generate_private_key(ec.SECP256R1())))
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{path} holds no EC private key")
    return VapidKeys(key)
