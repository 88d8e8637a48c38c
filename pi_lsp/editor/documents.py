"""The documents the editor holds open, as pi-lsp sees them (design.md section 3).

pi-lsp keeps its own store instead of pygls's text documents, because those split lines on ``\\f``,
``\\v``, U+2028 and more; here :mod:`pi_lsp.editor.positions` applies LSP's line rules only.

A :class:`Document` is keyed by URI; :meth:`DocumentStore.get` finds it by resolved real path
(several URIs may name one file: a symlink, a differently spelt path). ``untitled:`` and other
non-``file:`` URIs are stored but never matched to a path.

Disk state (design.md section 3): the :class:`DiskFingerprint` is recorded at every ``didOpen``,
every ``didSave`` and after the daemon's own writes (:meth:`DocumentStore.record_disk`).
``saved_text`` is set at ``didOpen`` only when the buffer equals the disk (strict UTF-8, BOM
dropped, no line-ending normalisation) and at every ``didSave``.

Verification (design.md section 4 step 5) uses waiters: :meth:`DocumentStore.expect_change` is
called *before* ``workspace/applyEdit`` is sent; each ``didChange`` of that file re-evaluates the
waiter's predicate, and :meth:`Waiter.wait` reports the outcome.

All methods are synchronous and meant to run on the daemon's event-loop thread; the small disk
reads at open/save happen inline.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pygls.uris import to_fs_path

from pi_lsp.editor.positions import apply_content_changes
from pi_lsp.tools.file_io.content_digest import sha256_hex
from pi_lsp.tools.file_io.real_paths import realpath
from pi_lsp.tools.file_io.regular_files import NotRegularFileError, read_regular_file

UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class DiskFingerprint:
    """What the file on disk looked like: ``mtime_ns`` (ns since epoch), ``size`` (bytes), ``sha256`` (hex)."""

    mtime_ns: int
    size: int
    sha256: str

    @classmethod
    def of_bytes(cls, data: bytes, stat: os.stat_result) -> "DiskFingerprint":
        """Fingerprint of ``data`` read from a file whose ``stat`` was taken with the read."""
        return cls(stat.st_mtime_ns, len(data), sha256_hex(data))  # often just hashed by the journal

    def matches(self, path: Path) -> bool:
        """True when ``path`` still holds the same content.

        Cheap when unchanged (one ``stat``); on an mtime or size change the file is hashed, so a
        touch without a content change still matches. A missing or unreadable file never matches.
        """
        try:
            stat = os.stat(path)
            if stat.st_mtime_ns == self.mtime_ns and stat.st_size == self.size:
                return True
            if stat.st_size != self.size:
                return False
            with open(path, "rb") as handle:
                return hashlib.sha256(handle.read()).hexdigest() == self.sha256
        except OSError:
            return False


def read_disk(path: Path) -> tuple[bytes, DiskFingerprint] | None:
    """Read ``path``'s bytes with their fingerprint, or ``None`` if it cannot be read.

    A device, FIFO or socket gives ``None`` unopened (reading one may block or never end).
    """
    try:
        data, stat = read_regular_file(path)
    except (OSError, NotRegularFileError):
        return None
    return data, DiskFingerprint.of_bytes(data, stat)


def decode_disk_text(data: bytes) -> tuple[str, bool] | None:
    """``(text, has_bom)`` for strict UTF-8 bytes (BOM dropped), ``None`` if not valid UTF-8."""
    has_bom = data.startswith(UTF8_BOM)
    try:
        return data[len(UTF8_BOM) :].decode("utf-8") if has_bom else data.decode("utf-8"), has_bom
    except UnicodeDecodeError:
        return None


def path_of_uri(uri: str) -> Path | None:
    """The filesystem path of a ``file:`` URI, ``None`` for ``untitled:`` and other schemes."""
    if not uri.startswith("file:"):
        return None
    try:
        fs_path = to_fs_path(uri)
    except Exception:  # a malformed URI is simply not a path
        return None
    return Path(fs_path) if fs_path else None


@dataclass(eq=False)
class Document:
    """One open editor buffer.

    Attributes:
        uri: as the client sent it.
        path: the URI's filesystem path (``None`` for non-``file:`` URIs).
        real_path: ``os.path.realpath(path)`` at open time (``None`` for non-``file:`` URIs).
        text: the buffer's text (code points; no BOM).
        version: the client's version of ``text`` (client-specific numbering; compare only for
            equality, real-clients.md pitfall 5).
        saved_text: the text known to be on disk, or ``None`` when unknown (buffer differed from
            disk at open, or the file did not exist).
        fingerprint: the disk state recorded at open/save/our own writes, or ``None``.
        client_dirty: the ``dirty`` flag of the last ``pi/documentState`` for ``client_dirty_version``.
        has_bom: the file on disk started with a UTF-8 BOM (recorded at open and save).
    """

    uri: str
    path: Path | None
    real_path: Path | None
    text: str
    version: int | None
    saved_text: str | None = None
    fingerprint: DiskFingerprint | None = None
    client_dirty: bool | None = None
    client_dirty_version: int | None = None
    has_bom: bool = False
    _data: tuple[str, bool, bytes] | None = field(default=None, init=False, repr=False)

    def data(self) -> bytes:
        """The bytes a save would write: the BOM (when ``has_bom``) and ``text`` in UTF-8 (lone
        surrogates passed through). Kept until ``text`` or ``has_bom`` changes, so reading an
        unchanged buffer again does not encode it again (5 ms for 3.4 MB of non-ASCII text;
        issue 21)."""
        kept = self._data
        if kept is not None and kept[0] is self.text and kept[1] == self.has_bom:
            return kept[2]
        data = (b"\xef\xbb\xbf" if self.has_bom else b"") + self.text.encode("utf-8", "surrogatepass")
        self._data = (self.text, self.has_bom, data)
        return data

    @property
    def dirty(self) -> bool:
        """The buffer has unsaved changes.

        The client's own word (``pi/documentState``) when it was given for the current version,
        else ``text != saved_text`` (unknown saved text counts as dirty).
        """
        if self.client_dirty is not None and self.client_dirty_version == self.version:
            return self.client_dirty
        return self.saved_text is None or self.text != self.saved_text

    @property
    def disk_newer(self) -> bool:
        """The file on disk changed since the recorded fingerprint (design.md section 3).

        A document without a path or fingerprint is never "disk newer". Does disk I/O.
        """
        if self.real_path is None or self.fingerprint is None:
            return False
        return not self.fingerprint.matches(self.real_path)


class WaitOutcome(enum.Enum):
    """How a verification wait ended (design.md section 4 step 5)."""

    SATISFIED = "satisfied"
    """A ``didChange`` made the predicate true."""
    ABSENT = "absent"
    """``didChange``\\ s arrived, but none satisfied the predicate before the timeout."""
    NO_CHANGE = "no_change"
    """No ``didChange`` arrived for the file before the timeout."""


@dataclass(frozen=True)
class WaitResult:
    """The outcome of :meth:`Waiter.wait` with the document state that decided it.

    ``text``/``version`` are the buffer at the satisfying change (``SATISFIED``), at the last
    change (``ABSENT``), or ``None`` (``NO_CHANGE``).
    """

    outcome: WaitOutcome
    text: str | None = None
    version: int | None = None


class Waiter:
    """Waits for a ``didChange`` of one file that satisfies a predicate.

    Created by :meth:`DocumentStore.expect_change`; resolved by :meth:`DocumentStore.did_change`.
    The predicate gets the :class:`Document` after the change; an exception in it counts as False.
    """

    def __init__(self, store: "DocumentStore", real_path: Path, predicate: Callable[[Document], bool]) -> None:
        self._store = store
        self.real_path = real_path
        self._predicate = predicate
        self._event = asyncio.Event()
        self._changed = False
        self._last: Document | None = None
        self._result: WaitResult | None = None

    def _on_change(self, document: Document) -> None:
        if self._result is not None:
            return
        self._changed = True
        self._last = document
        try:
            ok = bool(self._predicate(document))
        except Exception:
            ok = False
        if ok:
            self._result = WaitResult(WaitOutcome.SATISFIED, document.text, document.version)
            self._event.set()

    @property
    def result(self) -> WaitResult | None:
        """The outcome once satisfied, else ``None``."""
        return self._result

    async def wait(self, timeout: float) -> WaitResult:
        """Wait up to ``timeout`` seconds; always returns and unregisters the waiter."""
        try:
            if self._result is None:
                try:
                    await asyncio.wait_for(self._event.wait(), timeout)
                except TimeoutError:
                    pass
        finally:
            self.cancel()
        if self._result is not None:
            return self._result
        if self._changed and self._last is not None:
            return WaitResult(WaitOutcome.ABSENT, self._last.text, self._last.version)
        return WaitResult(WaitOutcome.NO_CHANGE)

    def cancel(self) -> None:
        """Unregister without waiting (idempotent)."""
        self._store._waiters.discard(self)


class DocumentStore:
    """The open documents, by URI, findable by real path. See the module docstring."""

    def __init__(self) -> None:
        self._docs: dict[str, Document] = {}
        self._waiters: set[Waiter] = set()
        self._by_real: dict[str, Document] | None = None
        """Real path (a str) -> the document :meth:`get` answers; rebuilt after an open or a close."""

    def did_open(self, uri: str, text: str, version: int | None) -> Document:
        """Record ``textDocument/didOpen`` (replaces an earlier open of the same URI).

        Resolves the waiters of the real path like a ``didChange``: Neovim reloads a buffer from
        disk as ``didClose`` + ``didOpen`` (real-clients.md; tests/editors/test_nvim.py reload test).
        """
        path = path_of_uri(uri)
        real_path = Path(os.path.realpath(path)) if path is not None else None
        document = Document(uri, path, real_path, text, version)
        if real_path is not None:
            self._load_disk_state(document)
        self._docs[uri] = document
        self._by_real = None
        if real_path is not None:  # a reopen is a change too: Neovim reloads as didClose + didOpen
            for waiter in list(self._waiters):
                if waiter.real_path == real_path:
                    waiter._on_change(document)
        return document

    def did_change(self, uri: str, version: int | None, changes: Any, encoding: Any) -> Document | None:
        """Apply ``textDocument/didChange``; return the document, or ``None`` for an unknown URI.

        Raises ``ValueError`` for malformed changes; the document is then left unchanged.
        Resolves the waiters of the document's real path.
        """
        document = self._docs.get(uri)
        if document is None:
            return None
        document.text = apply_content_changes(document.text, changes, encoding)
        document.version = version
        if document.real_path is not None:
            for waiter in list(self._waiters):
                if waiter.real_path == document.real_path:
                    waiter._on_change(document)
        return document

    def did_save(self, uri: str, text: str | None = None) -> Document | None:
        """Record ``textDocument/didSave``: ``saved_text`` = ``text`` if given, else the buffer."""
        document = self._docs.get(uri)
        if document is None:
            return None
        if text is not None:
            document.text = text
        document.saved_text = document.text
        document.client_dirty = None
        if document.real_path is not None:
            self._load_disk_state(document)
        return document

    def did_close(self, uri: str) -> Document | None:
        """Forget the document (``textDocument/didClose``); return it, or ``None`` if unknown."""
        self._by_real = None
        return self._docs.pop(uri, None)

    def document_state(self, uri: str, version: int | None, dirty: bool) -> Document | None:
        """Record ``pi/documentState {uri, version, dirty}`` (the client's exact dirty flag)."""
        document = self._docs.get(uri)
        if document is None:
            return None
        document.client_dirty = bool(dirty)
        document.client_dirty_version = version if version is not None else document.version
        return document

    def get(self, path: Path, real_path: str | None = None) -> Document | None:
        """The open document of ``path`` (compared by real path: ``real_path`` when the caller
        knows it from this moment, else resolved here), or ``None``.

        When several URIs name the file, the most recently opened one wins.
        """
        index = self._by_real
        if index is None:  # the last one in opening order wins, as the scan it replaces
            index = self._by_real = {str(d.real_path): d for d in self._docs.values() if d.real_path is not None}
        if not index:
            return None
        return index.get(realpath(path) if real_path is None else real_path)  # the kernel's answer, no Path built

    def by_uri(self, uri: str) -> Document | None:
        """The document of ``uri`` exactly as the client sent it, or ``None``."""
        return self._docs.get(uri)

    def documents(self) -> list[Document]:
        """Every open document, in opening order."""
        return list(self._docs.values())

    def record_disk(self, path: Path) -> None:
        """Refresh the fingerprint (and BOM flag) of the documents of ``path`` after our own write."""
        real = Path(os.path.realpath(path))
        for document in self._docs.values():
            if document.real_path == real:
                self._load_disk_state(document)

    @staticmethod
    def check_disk(document: Document) -> bool:
        """Whether ``document``'s file is newer than its buffer's record; adopts an equal disk.

        Returns ``True`` ("disk newer", design.md section 3) when the file changed since the
        recorded fingerprint and its text (strict UTF-8, BOM dropped) differs from the buffer.
        When the file changed but now holds exactly the buffer's text (the editor reloaded it
        itself, as VS Code does for clean buffers, or answered ``pi/reloadDocuments``), the new
        disk state is recorded (fingerprint, ``saved_text`` = the buffer) and ``False`` returned:
        such a buffer is clean, not in conflict. A missing or unreadable file counts as newer.
        Does disk I/O; call it in a worker thread for large files.
        """
        if document.real_path is None or document.fingerprint is None:
            return False
        if document.fingerprint.matches(document.real_path):
            return False
        disk = read_disk(document.real_path)
        if disk is None:
            return True
        decoded = decode_disk_text(disk[0])
        if decoded is None or decoded[0] != document.text:
            return True
        document.fingerprint = disk[1]
        document.has_bom = decoded[1]
        document.saved_text = document.text
        return False

    def expect_change(self, real_path: Path, predicate: Callable[[Document], bool]) -> Waiter:
        """Register a :class:`Waiter` for the next ``didChange``\\ s of ``real_path``.

        Call it before sending the edit, so a change that arrives before the reply is seen.
        """
        waiter = Waiter(self, Path(os.path.realpath(real_path)), predicate)
        self._waiters.add(waiter)
        return waiter

    @staticmethod
    def _load_disk_state(document: Document) -> None:
        assert document.real_path is not None
        disk = read_disk(document.real_path)
        if disk is None:
            document.fingerprint = None
            return
        data, document.fingerprint = disk
        decoded = decode_disk_text(data)
        document.has_bom = data.startswith(UTF8_BOM)
        if decoded is not None and document.saved_text is None and decoded[0] == document.text:
            document.saved_text = document.text
