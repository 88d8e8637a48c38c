"""Images for ``read``: sniffing by content, BMP conversion and resizing (pi-behaviour.md 2.1).

An image is recognised by its bytes, never by its name: a PNG called ``image.txt`` is an image, a
text file called ``x.png`` is text. Supported: JPEG, PNG (not animated), GIF, WebP, and BMP, which
is converted to PNG. Images larger than 2000x2000 pixels or whose base64 form is not below 4.5 MiB
are scaled down to fit (aspect kept) and re-encoded as PNG or JPEG, Pi's order of candidates, with
Pi's hint texts. Pillow does the decoding and encoding.
"""

from __future__ import annotations

import base64
import io
import struct
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

SNIFF_BYTES = 4100
"""How many leading bytes :func:`sniff_image_mime` needs (Pi reads this many)."""
MAX_DIMENSION = 2000
"""Maximum width and height in pixels sent to a model."""
MAX_BASE64_BYTES = int(4.5 * 1024 * 1024)
"""The base64 payload must be strictly below this many bytes."""
JPEG_QUALITIES = (80, 85, 70, 55, 40)
"""JPEG qualities tried after PNG at each size, in Pi's order."""

CONVERT_FAILED = "[Image omitted: could not be converted to a supported inline image format.]"
RESIZE_FAILED = "[Image omitted: could not be resized below the inline image size limit.]"

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_BMP_BITS = {1, 4, 8, 16, 24, 32}


def _png_kind(head: bytes) -> str | None:
    """``"image/png"``, ``"apng"`` for an animated PNG, or ``None`` when it is no PNG."""
    if not head.startswith(_PNG_SIGNATURE) or head[12:16] != b"IHDR":
        return None
    offset = 8
    while offset + 8 <= len(head):
        length = struct.unpack(">I", head[offset : offset + 4])[0]
        chunk = head[offset + 4 : offset + 8]
        if chunk == b"acTL":
            return "apng"
        if chunk == b"IDAT":
            break
        offset += 12 + length
    return "image/png"


def _is_bmp(head: bytes) -> bool:
    """``BM`` plus a sane header: sizes, DIB header 12 or 40..124 bytes, 1 plane, known depth."""
    if len(head) < 26 or not head.startswith(b"BM"):
        return False
    declared_size, _, pixel_offset, dib_size = struct.unpack("<IIII", head[2:18])
    if dib_size == 12:
        planes, bits = struct.unpack("<HH", head[22:26])
    elif 40 <= dib_size <= 124 and len(head) >= 30:
        planes, bits = struct.unpack("<HH", head[26:30])
    else:
        return False
    if declared_size and declared_size < 14 + dib_size:
        return False
    if pixel_offset < 14 + dib_size or (declared_size and pixel_offset > declared_size):
        return False
    return planes == 1 and bits in _BMP_BITS


_IMAGE_LEADS = frozenset(b"\xff\x89GRB")
"""The first byte of every image :func:`sniff_image_mime` knows: JPEG, PNG, GIF, RIFF, BMP."""


def sniff_image_mime(head: bytes) -> str | None:
    """The MIME type of a supported image from its first :data:`SNIFF_BYTES` bytes, else ``None``.

    JPEG ``FF D8 FF`` (not JPEG-LS, whose 4th byte is ``F7``); PNG signature with ``IHDR`` first
    and no ``acTL`` before ``IDAT`` (animated PNGs are not images here); ``GIF87a``/``GIF89a``
    (Pi 1.6.0; 0.73.1 took any text starting with ``GIF`` for an image); ``RIFF``..``WEBP``;
    ``BM`` with a sane header (``image/bmp``).
    """
    if not head or head[0] not in _IMAGE_LEADS:  # most files: ruled out by their first byte
        return None
    if head.startswith(b"\xff\xd8\xff"):
        return None if len(head) > 3 and head[3] == 0xF7 else "image/jpeg"
    png = _png_kind(head)
    if png is not None:
        return png if png == "image/png" else None
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if _is_bmp(head):
        return "image/bmp"
    return None


@dataclass
class InlineImage:
    """What read sends for an image file.

    Attributes:
        mime_type: the type of ``data`` (PNG after a BMP conversion; may change on resize), or of
            the file when the image was omitted.
        data: base64 payload, or ``None`` when the image was omitted.
        notes: hint lines for the text block, in order (conversion, resize, omission).
    """

    mime_type: str
    data: str | None
    notes: list[str] = field(default_factory=list)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _encode(image: "object", fmt: str, quality: int | None = None) -> bytes:
    out = io.BytesIO()
    if quality is None:
        image.save(out, format=fmt, optimize=False)  # type: ignore[attr-defined]
    else:
        rgb = image if image.mode == "RGB" else image.convert("RGB")  # type: ignore[attr-defined]
        rgb.save(out, format=fmt, quality=quality)
    return out.getvalue()


def _fit(width: int, height: int, max_width: int, max_height: int) -> tuple[int, int]:
    if width > max_width:
        height = round(height * max_width / width)
        width = max_width
    if height > max_height:
        width = round(width * max_height / height)
        height = max_height
    return max(1, width), max(1, height)


def prepare_image(
    data: bytes,
    mime_type: str,
    *,
    max_width: int = MAX_DIMENSION,
    max_height: int = MAX_DIMENSION,
    max_base64_bytes: int = MAX_BASE64_BYTES,
) -> InlineImage:
    """Turn the bytes of an image file (``mime_type`` from :func:`sniff_image_mime`) into what a
    model may receive.

    BMP is converted to PNG first (note ``[Image converted from image/bmp to image/png.]``; failure
    gives :data:`CONVERT_FAILED`). An image within the limits (after EXIF orientation) is returned
    with its original bytes. Otherwise it is scaled to fit ``max_width`` x ``max_height`` and
    encoded as PNG, then JPEG at :data:`JPEG_QUALITIES`; the first candidate whose base64 is below
    ``max_base64_bytes`` wins; if none does, both sides shrink to 75% and it is tried again, down to
    1x1. Success adds ``[Image: original WxH, displayed at wxh. Multiply coordinates by S to map to
    original image.]``; failure (or an undecodable image) gives :data:`RESIZE_FAILED`. Never raises.
    """
    from PIL import Image, ImageOps  # imported lazily: only image reads pay for Pillow

    notes: list[str] = []
    if mime_type == "image/bmp":
        try:
            with Image.open(io.BytesIO(data)) as bmp:
                bmp.load()
                data = _encode(bmp, "PNG")
        except Exception:
            return InlineImage(mime_type, None, [CONVERT_FAILED])
        notes.append("[Image converted from image/bmp to image/png.]")
        mime_type = "image/png"
    try:
        with Image.open(io.BytesIO(data)) as raw:
            image = ImageOps.exif_transpose(raw)
            image.load()
    except Exception:
        return InlineImage(mime_type, None, notes + [RESIZE_FAILED])
    width, height = image.size
    payload = _b64(data)
    if width <= max_width and height <= max_height and len(payload) < max_base64_bytes:
        return InlineImage(mime_type, payload, notes)
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA" if "A" in image.getbands() or "transparency" in image.info else "RGB")
    current = _fit(width, height, max_width, max_height)
    while True:
        resized = image.resize(current, Image.Resampling.LANCZOS)
        candidates = [("image/png", lambda: _encode(resized, "PNG"))] + [
            ("image/jpeg", lambda q=q: _encode(resized, "JPEG", q)) for q in JPEG_QUALITIES
        ]
        for candidate_mime, encode in candidates:
            try:
                encoded = _b64(encode())
            except Exception:
                continue
            if len(encoded) < max_base64_bytes:
                # JS toFixed(2): ties go up on the exact binary value (Python's format rounds to even)
                scale = Decimal(width / current[0]).quantize(Decimal("0.01"), ROUND_HALF_UP)
                notes.append(
                    f"[Image: original {width}x{height}, displayed at {current[0]}x{current[1]}. "
                    f"Multiply coordinates by {scale} to map to original image.]"
                )
                return InlineImage(candidate_mime, encoded, notes)
        if current == (1, 1):
            break
        shrunk = (max(1, int(current[0] * 0.75)), max(1, int(current[1] * 0.75)))
        if shrunk == current:
            break
        current = shrunk
    return InlineImage(mime_type, None, notes + [RESIZE_FAILED])
