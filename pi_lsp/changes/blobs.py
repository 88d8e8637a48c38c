"""Content-addressed storage of file contents for the change journal.

Blobs are stored under their SHA-256 (hex) in ``root/<2 hex>/<62 hex>``, written once (temp file and
rename). :meth:`BlobStore.put` refuses (returns ``None``) content over ``max_file_bytes`` or content
that would take the store over ``max_total_bytes``: the caller marks such a file "not restorable"
instead of silently skipping it. Sizes are bytes.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


class BlobStore:
    """A directory of immutable blobs with a size budget."""

    def __init__(self, root: Path, *, max_file_bytes: int = 8 << 20, max_total_bytes: int = 512 << 20) -> None:
        self.root = root
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self._total: int | None = None

    def _path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest[2:]

    def total_bytes(self) -> int:
        """Bytes held now (computed once by a scan, then kept up to date)."""
        if self._total is None:
            self._total = sum(p.stat().st_size for p in self.root.glob("*/*")) if self.root.is_dir() else 0
        return self._total

    def put(self, data: bytes) -> str | None:
        """Store ``data``; its SHA-256 hex digest, or ``None`` when it is over a limit."""
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if path.exists():
            return digest
        if len(data) > self.max_file_bytes or self.total_bytes() + len(data) > self.max_total_bytes:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_bytes(data)
        os.replace(temp, path)
        self._total = self.total_bytes() + len(data)
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
