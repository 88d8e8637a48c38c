"""Garbage collection of the change journal's blobs (issue 18): what no journal needs any more.

A blob of a workspace's store is garbage when no change journal of that workspace references it
(a ``change`` line's ``before`` or ``after``), the running process does not hold it (the bash
snapshot's content cache: the before-content of files no command changed yet), and it was written
(or reused) more than ``grace_seconds`` ago. The collector runs when a daemon starts and when a
blob would take the store over its budget (at most once per ``grace_seconds / 10``).

Safety against other processes of the same workspace: each process that writes blobs holds an
exclusive ``flock`` on its own file under ``<store>/.live/``; a collection happens only when every
other such file can be locked (its process is gone; the file is then removed), so another
daemon's content cache is never collected. A process starting meanwhile only writes new blobs or
reuses old ones; reuse refreshes a blob's mtime (:meth:`BlobStore.put`) and the collector checks
the mtime again right before removing a blob, so such a blob is young and kept. Temp files older
than the grace period (a write cut short by a crash) are removed too.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pi_lsp.changes.blobs import BlobStore
from pi_lsp.changes.journal import UNRESTORABLE

logger = logging.getLogger(__name__)

LIVE_DIR = ".live"


@dataclass
class CollectReport:
    """What a collection did: ``skipped`` names why it did not run (another process is alive, a
    journal could not be read); ``removed`` blobs freed ``freed_bytes``; ``kept`` stayed."""

    removed: int = 0
    freed_bytes: int = 0
    kept: int = 0
    skipped: str | None = None


def referenced_digests(journal_dir: Path) -> set[str]:
    """Every blob digest a ``change`` line of a journal in ``journal_dir`` names.

    Raises ``OSError`` when a journal cannot be read (the caller must not collect then).
    """
    found: set[str] = set()
    if not journal_dir.is_dir():
        return found
    for path in journal_dir.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if '"change"' not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a torn last line
            if isinstance(entry, dict) and entry.get("type") == "change":
                for key in ("before", "after"):
                    value = entry.get(key)
                    if isinstance(value, str) and value != UNRESTORABLE:
                        found.add(value)
    return found


class BlobCollector:
    """Collects one workspace's blob store (see the module docstring).

    ``held`` returns the digests this process still needs outside the journals (the bash
    snapshot's content cache). Call :meth:`close` when the process stops writing blobs.
    """

    def __init__(self, journal_dir: Path, blobs: BlobStore, held: Callable[[], Iterable[str]],
                 grace_seconds: float = 3600.0) -> None:
        self.journal_dir = journal_dir
        self.blobs = blobs
        self.held = held
        self.grace_seconds = grace_seconds
        self._lock = threading.Lock()
        self._last_run = float("-inf")
        self._live_fd: int | None = None
        self._live_path: Path | None = None
        self._register()
        blobs.on_full = self.on_full

    def _register(self) -> None:
        """Hold this process's live file (an exclusive flock for as long as the process runs)."""
        live = self.blobs.root / LIVE_DIR
        try:
            live.mkdir(parents=True, exist_ok=True)
            path = live / f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            logger.warning("blob store %s: no live file (%s); it will not be collected", self.blobs.root, exc)
            return
        self._live_fd, self._live_path = fd, path

    def close(self) -> None:
        """Release this process's live file. Idempotent."""
        fd, path = self._live_fd, self._live_path
        self._live_fd = self._live_path = None
        if fd is not None and path is not None:
            try:
                path.unlink()
            except OSError:
                pass
            os.close(fd)

    def _others_alive(self) -> bool:
        """Whether another process holds a live file (stale ones, of dead processes, are removed)."""
        live = self.blobs.root / LIVE_DIR
        try:
            names = [p for p in live.iterdir() if p != self._live_path]
        except OSError:
            return False
        for path in names:
            try:
                fd = os.open(path, os.O_RDWR)
            except OSError:
                continue  # removed meanwhile
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            else:
                try:
                    path.unlink()
                except OSError:
                    pass
            finally:
                os.close(fd)
        return False

    def collect(self, now: float | None = None) -> CollectReport:
        """Remove the garbage now (see the module docstring); never raises."""
        with self._lock:
            self._last_run = time.monotonic()
            if self._live_fd is None:
                return CollectReport(skipped="this process has no live file")
            if self._others_alive():
                return CollectReport(skipped="another process of this workspace is running")
            try:
                keep = referenced_digests(self.journal_dir) | set(self.held())
            except OSError as exc:
                logger.warning("blob store %s not collected: a journal is unreadable (%s)", self.blobs.root, exc)
                return CollectReport(skipped=f"a journal is unreadable: {exc}")
            report = self._sweep(keep, time.time() if now is None else now)
            self.blobs.forget_total()
            if report.removed:
                logger.info("blob store %s: removed %d unreferenced blobs (%d bytes)",
                            self.blobs.root, report.removed, report.freed_bytes)
            return report

    def _sweep(self, keep: set[str], now: float) -> CollectReport:
        report = CollectReport()
        deadline = now - self.grace_seconds
        for path in self.blobs.root.glob("[0-9a-f][0-9a-f]/*"):
            digest = path.parent.name + path.name
            temp = path.name.startswith(".")
            if not temp and (digest in keep or digest in self.blobs.used):
                report.kept += 1
                continue
            try:
                info = path.stat()
                if info.st_mtime > deadline:  # young (written or reused lately): checked again here
                    report.kept += 1
                    continue
                path.unlink()
            except OSError:
                continue
            report.removed += 1
            report.freed_bytes += info.st_size
        return report

    def on_full(self) -> None:
        """The store is over its budget: collect, unless that was tried lately."""
        if time.monotonic() - self._last_run >= self.grace_seconds / 10:
            self.collect()
