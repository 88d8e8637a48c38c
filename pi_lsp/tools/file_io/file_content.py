"""What kind of content a file holds, for ``read`` (design.md section 7).

Pi decodes every non-image file as UTF-8 with replacement characters. pi-lsp refines that:

- files that start with a UTF-32 or UTF-16 byte-order mark are transcoded (the BOM dropped);
- binary files (a known binary signature, or a NUL byte in the first 8 KiB) are refused with their
  size and type, because their bytes only waste a model's context;
- other invalid UTF-8 is decoded with U+FFFD and a notice says where the first bad byte is.

A UTF-8 BOM is kept as U+FEFF at the start of the text, as the peer does (Node's
``Buffer.toString`` keeps it).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

BINARY_SNIFF_BYTES = 8192
"""A NUL byte within this many leading bytes marks a file as binary."""

# (offset, magic bytes, description); checked in order, first match wins
_SIGNATURES: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x7fELF", "ELF executable or library"),
    (0, b"PK\x03\x04", "zip archive (also jar, docx, xlsx, odt, whl)"),
    (0, b"PK\x05\x06", "zip archive (empty)"),
    (0, b"%PDF-", "PDF document"),
    (0, b"\x1f\x8b", "gzip compressed data"),
    (0, b"SQLite format 3\x00", "SQLite database"),
    (0, b"BZh", "bzip2 compressed data"),
    (0, b"\xfd7zXZ\x00", "xz compressed data"),
    (0, b"7z\xbc\xaf\x27\x1c", "7-zip archive"),
    (0, b"Rar!\x1a\x07", "RAR archive"),
    (0, b"\x28\xb5\x2f\xfd", "zstd compressed data"),
    (0, b"\xca\xfe\xba\xbe", "Java class file or Mach-O universal binary"),
    (0, b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (0, b"\xce\xfa\xed\xfe", "Mach-O executable"),
    (0, b"\x00asm", "WebAssembly module"),
    (0, b"\x89PNG\r\n\x1a\n", "PNG image (animated or unsupported)"),
    (0, b"\xff\xd8\xff", "JPEG image (unsupported variant)"),
    (0, b"II*\x00", "TIFF image"),
    (0, b"MM\x00*", "TIFF image"),
    (0, b"8BPS", "Photoshop image"),
    (0, b"OggS", "Ogg media"),
    (0, b"fLaC", "FLAC audio"),
    (0, b"ID3", "MP3 audio"),
    (4, b"ftyp", "MP4/QuickTime/HEIF media"),
    (0, b"\x1aE\xdf\xa3", "Matroska/WebM media"),
    (257, b"ustar", "tar archive"),
)

_BOMS: tuple[tuple[bytes, str, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32LE"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32BE"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16LE"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16BE"),
)


def binary_kind(data: bytes) -> str | None:
    """A short description of ``data``'s binary type, or ``None`` when it may be text.

    A known signature names the type (``"ELF executable or library"``, ``"PDF document"`` ...);
    a NUL byte in the first :data:`BINARY_SNIFF_BYTES` gives ``"binary data"``. Text with a
    UTF-16/32 byte-order mark is *not* binary (it contains NULs legitimately).
    """
    if data.startswith(_BOM_PREFIXES):
        return None
    if _has_signature(data):
        for offset, magic, description in _SIGNATURES:  # one matches: the first in order wins
            if data[offset : offset + len(magic)] == magic:
                return description
    if data.find(b"\x00", 0, BINARY_SNIFF_BYTES) >= 0:
        return "binary data"
    return None


def _has_signature(data: bytes) -> bool:
    if data.startswith(_LEADING_MAGICS):
        return True
    for offset, magic in _OFFSET_MAGICS:
        if data.startswith(magic, offset):
            return True
    return False


# binary_kind runs on every read: one C call rules out the leading signatures at once
_BOM_PREFIXES = tuple(bom for bom, _, _ in _BOMS)
_LEADING_MAGICS = tuple(magic for offset, magic, _ in _SIGNATURES if offset == 0)
_OFFSET_MAGICS = tuple((offset, magic) for offset, magic, _ in _SIGNATURES if offset != 0)


_VALIDATE_CHUNK = 1 << 16


def is_valid_utf8(data: bytes) -> bool:
    """True when ``data`` is valid UTF-8 (Python's strict codec: no surrogates, no overlongs).

    ASCII is recognised without decoding; other data is checked in 64 KiB pieces, decoding only
    the pieces that hold non-ASCII bytes (or finish a character the previous piece started), so
    no text of the whole file is built. Valid UTF-8 never starts with a UTF-16/32 byte-order
    mark (``FE`` and ``FF`` never occur in it), so such data needs no transcoding.
    """
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(data), _VALIDATE_CHUNK):
            piece = data[start : start + _VALIDATE_CHUNK]
            if not piece.isascii() or decoder.getstate()[0]:
                decoder.decode(piece)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


@dataclass(frozen=True)
class DecodedText:
    """Text decoded for reading: ``text`` plus an optional ``notice`` line for the model."""

    text: str
    notice: str | None = None


def decode_for_reading(data: bytes) -> DecodedText:
    """Decode file bytes into text for ``read``.

    - UTF-32/UTF-16 BOM (checked longest first): transcoded without the BOM; notice
      ``[File is UTF-16LE with a byte-order mark; shown decoded as text.]``. Malformed units become
      U+FFFD.
    - Valid UTF-8 (a UTF-8 BOM stays as U+FEFF, like the peer): no notice.
    - Otherwise decoded with U+FFFD per invalid sequence; notice
      ``[File is not valid UTF-8 (first invalid byte at offset N); invalid bytes shown as U+FFFD.]``
      with N the 0-based byte offset.
    """
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(codec, errors="replace")
            return DecodedText(text, f"[File is {label} with a byte-order mark; shown decoded as text.]")
    try:
        return DecodedText(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        return DecodedText(
            text,
            f"[File is not valid UTF-8 (first invalid byte at offset {exc.start}); "
            "invalid bytes shown as U+FFFD.]",
        )
