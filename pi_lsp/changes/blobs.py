"""Content-addressed storage of file contents for the change journal.

Blobs are stored under their SHA-256 (hex) in ``root/<2 hex>/<62 hex>``, written once (temp file and
rename). :meth:`BlobStore.put` refuses (returns ``None``) content over ``max_file_bytes`` or content
that would take the store over ``max_total_bytes``: the caller marks such a file "not restorable"
instead of silently skipping it. Sizes are bytes.

Every digest stored or reused by this process is in :attr:`BlobStore.used`, and reusing a blob
refreshes its mtime: :mod:`.blob_gc` never collects either. When a blob would take the store over
its budget, :attr:`BlobStore.on_full` (the collector) runs first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pi_lsp.tools.file_io.content_digest import sha256_hex


class BlobStore:
    """A directory of immutable blobs with a size budget."""

    def __init__(self, root: Path, *, max_file_bytes: int = 8 << 20, max_total_bytes: int = 512 << 20) -> None:
        self.root = root
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self._total: int | None = None
        self.used: set[str] = set()
        """Digests this process stored or reused (never collected while it runs)."""
        self.on_full: Callable[[], None] | None = None
        """Called when a blob would take the store over ``max_total_bytes``, before refusing it."""

    def _path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest[2:]

    def total_bytes(self) -> int:
        """Bytes held now (computed once by a scan, then kept up to date)."""
        if self._total is None:
            self._total = sum(_size(p) for p in self.root.glob("[0-9a-f][0-9a-f]/*")) if self.root.is_dir() else 0
        return self._total

    def forget_total(self) -> None:
        """Count :meth:`total_bytes` again at the next call (after a collection)."""
        self._total = None

    def fits(self, size: int) -> bool:
        """Whether a new blob of ``size`` bytes is within the limits (collecting first, through
        :attr:`on_full`, when it would take the store over its budget)."""
        if size > self.max_file_bytes:
            return False
        if self.total_bytes() + size > self.max_total_bytes and self.on_full is not None:
            self.on_full()
        return self.total_bytes() + size <= self.max_total_bytes

    def put(self, data: bytes) -> str | None:
        """Store ``data``; its SHA-256 hex digest, or ``None`` when it is over a limit."""
        digest = sha256_hex(data)  # often the bytes hashed just before (content_digest)
        path = self._path(digest)
        if path.exists():
            try:
                os.utime(path)  # reused: young again for the collector
            except OSError:
                pass
            else:
                self.used.add(digest)
                return digest
        if not self.fits(len(data)):
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_bytes(data)
        os.replace(temp, path)
        self._total = self.total_bytes() + len(data)
        self.used.add(digest)
        return digest

    def has(self, digest: str) -> bool:
        """Whether the blob is stored."""
        return self._path(digest).exists()

    def get(self, digest: str) -> bytes:
        """The blob's bytes; ``KeyError`` when it is not stored."""
        try:
            return self._path(digest).read_bytes()
        except FileNotFoundError:
            raise KeyError(digest) from None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # collected meanwhile
        return 0
