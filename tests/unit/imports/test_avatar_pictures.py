"""An uploaded avatar (imports/pictures.py): PNG, JPEG and WebP by their first bytes, each
stored as a PNG of at most 512 pixels a side without the file's metadata; anything else,
too large, too wide or broken is refused with one line."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from novaberg.imports.pictures import (
    AVATAR_SIDE,
    AVATAR_UPLOAD_MAX_BYTES,
    PictureError,
    reencode,
    sniff,
)


def encoded(kind: str, size: tuple[int, int] = (800, 400), **options: object) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (10, 200, 30)).save(out, format=kind, **options)
    return out.getvalue()


@pytest.mark.parametrize("kind", ["PNG", "JPEG", "WEBP"])
def test_each_format_becomes_a_small_png(kind: str) -> None:
    data = encoded(kind)
    assert sniff(data) == kind
    stored = reencode(data)
    with Image.open(io.BytesIO(stored)) as image:
        assert image.format == "PNG"
        assert image.size == (AVATAR_SIDE, AVATAR_SIDE // 2)


def test_metadata_and_trailing_bytes_are_not_kept() -> None:
    exif = Image.Exif()
    exif[0x010E] = "GPS secret"  # ImageDescription
    data = encoded("JPEG", (40, 40), exif=exif.tobytes()) + b"<script>trailer</script>"
    stored = reencode(data)
    assert b"GPS secret" not in stored and b"trailer" not in stored


@pytest.mark.parametrize(
    "data",
    [
        b"<svg xmlns='http://www.w3.org/2000/svg'/>",
        encoded("GIF", (4, 4)),
        b"\x89PNG\r\n\x1a\n" + b"\0" * 40,
        b"",
    ],
)
def test_no_picture_we_take_is_refused(data: bytes) -> None:
    with pytest.raises(PictureError):
        reencode(data)


def test_too_large_and_too_wide_are_refused_before_decoding() -> None:
    with pytest.raises(PictureError, match="bytes"):
        reencode(b"\xff\xd8\xff" + b"\0" * AVATAR_UPLOAD_MAX_BYTES)
    with pytest.raises(PictureError, match="pixels"):
        reencode(encoded("PNG", (5000, 10)))
