"""A character's picture from an upload: checked, shrunk and written again as PNG.

A picture someone uploads is never stored as it came: it must be a PNG, JPEG or WebP by
its first bytes (not by what the client claims), within `AVATAR_UPLOAD_MAX_BYTES` and
`MAX_SIDE_PIXELS` a side before it is decoded (a small file can claim a huge canvas), and it
is decoded and encoded again as a PNG of at most `AVATAR_SIDE` pixels a side. What is stored
is therefore pixels only: no metadata (EXIF location), no trailing bytes, no second format
hidden in the file. CPU work: call `reencode` off the event loop.
"""

from __future__ import annotations

import io
from typing import Final

from PIL import Image, UnidentifiedImageError

AVATAR_UPLOAD_MAX_BYTES: Final = 512 * 1024
"""An uploaded picture's largest size (base64 in a JSON body stays under the request limit)."""
MAX_SIDE_PIXELS: Final = 4096
"""Wider or taller pictures are refused before their pixels are decoded."""
AVATAR_SIDE: Final = 512
"""A stored avatar is at most this many pixels a side (it is shown at 40)."""
STORED_TYPE: Final = "image/png"

_SIGNATURES: Final = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
)


class PictureError(ValueError):
    """Not a picture we take (one line: why)."""


def sniff(data: bytes) -> str | None:
    """The format by the file's first bytes: PNG, JPEG, WEBP, or None."""
    for signature, name in _SIGNATURES:
        if data.startswith(signature):
            return name
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return None


def reencode(data: bytes) -> bytes:
    """`data` as a PNG of at most AVATAR_SIDE a side; PictureError if it is none of PNG,
    JPEG, WebP, too large, or broken."""
    if len(data) > AVATAR_UPLOAD_MAX_BYTES:
        raise PictureError(
            f"the picture has {len(data)} bytes, at most {AVATAR_UPLOAD_MAX_BYTES} are taken"
        )
    kind = sniff(data)
    if kind is None:
        raise PictureError("not a PNG, JPEG or WebP picture")
    try:
        with Image.open(io.BytesIO(data), formats=[kind]) as image:
            width, height = image.size
            if width > MAX_SIDE_PIXELS or height > MAX_SIDE_PIXELS:
                raise PictureError(
                    f"the picture is {width}×{height} pixels, at most {MAX_SIDE_PIXELS} a side"
                )
            image.load()
            picture = image.convert("RGBA")
    except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError) as exc:
        raise PictureError(
            f"the {kind} picture cannot be read ({exc.__class__.__name__})"
        ) from None
    picture.thumbnail((AVATAR_SIDE, AVATAR_SIDE))
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=True)
    return out.getvalue()
