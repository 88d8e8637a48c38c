"""The per-file mutation queue: edits and writes of one file run one at a time (pi-behaviour.md 3).

``edit`` and ``write`` hold :func:`file_mutation_lock` from reading the old text until their result
is final (for the editor route: applied, verified and saved, design.md section 2). Operations on
the same file run strictly first-come first-served; operations on different files run
concurrently. A symlink and its target are the same file (the key is the real path). read, bash,
grep, find and ls do not take the lock.

The queue lives in the running process and is meant for one event loop (the daemon's, or the
``pi-lsp exec`` loop). An entry exists only while someone holds or waits for it.
"""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


@dataclass
class _Entry:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


_entries: dict[str, _Entry] = {}


def mutation_key(path: Path) -> Path:
    """The queue key of ``path``: its real path (symlinks resolved).

    ``path`` is made absolute first (against the process cwd; tools pass absolute paths). When
    the file or a parent does not exist yet (``ENOENT``/``ENOTDIR``), the normalised absolute path
    is the key. Any other failure (``ELOOP`` for a symlink loop, ``EACCES``) is raised as
    :class:`OSError`.
    """
    absolute = os.path.abspath(os.fspath(path))
    try:
        return Path(os.path.realpath(absolute, strict=True))
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return Path(absolute)
        if exc.errno is None:  # Python reports a symlink loop without errno in some versions
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), absolute) from exc
        raise


@asynccontextmanager
async def file_mutation_lock(path: Path) -> AsyncIterator[Path]:
    """Hold the mutation lock of ``path`` for the body of an ``async with``; yields the key.

    FIFO per key: callers get the lock in the order they entered (the key is computed without
    awaiting, so entering order is call order). The lock is released after success, error or
    cancellation; a caller cancelled while waiting leaves the queue without running. Raises
    :class:`OSError` from :func:`mutation_key`.
    """
    key = os.fspath(mutation_key(path))
    entry = _entries.get(key)
    if entry is None:
        entry = _entries[key] = _Entry()
    entry.users += 1
    try:
        async with entry.lock:
            yield Path(key)
    finally:
        entry.users -= 1
        if entry.users == 0 and _entries.get(key) is entry:
            del _entries[key]


def active_keys() -> list[Path]:
    """The keys that currently have a holder or waiters (for tests and diagnostics)."""
    return [Path(key) for key in _entries]


async def finish_despite_cancel(awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` to its end even if the calling task is cancelled meanwhile.

    Pi's edit and write keep the per-file lock until in-flight filesystem work has settled
    (pi-behaviour.md 1.5): a write running in a worker thread cannot be stopped, so releasing the
    lock early would let the next queued write race it. Use inside :func:`file_mutation_lock`.
    If a cancellation arrived, it is re-raised (:class:`asyncio.CancelledError`) once the work is
    done, so the caller reports ``Operation aborted`` although the work happened; otherwise the
    work's result is returned (or its exception raised).
    """
    task = asyncio.ensure_future(awaitable)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})  # unlike a plain await, does not cancel the work
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        if not task.cancelled():
            task.exception()  # mark as retrieved: the cancellation is what the caller reports
        raise asyncio.CancelledError()
    return task.result()
