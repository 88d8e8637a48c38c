"""Noticing that nobody reads a pipe we write to any more, before the next write fails.

``pi-lsp exec ... | head -1``: ``head`` exits after the first answer, but the line running then (a
long ``bash`` call) would only learn it when its answer is written, minutes later. For a pipe
(FIFO), Linux reports the write end in error (``EPOLLERR``) as soon as the read end is closed;
epoll reports that whatever events were asked for, and asyncio hands it to a reader callback. A
pipe's write end is never readable, so the callback means exactly that. Other outputs (a file, a
terminal, a socket) are not watched: a terminal or socket can be readable for other reasons, and a
file has no reader to lose.
"""

from __future__ import annotations

import asyncio
import os
import select
import stat
from collections.abc import Callable


def watch_reader_gone(
    loop: asyncio.AbstractEventLoop, fd: int, on_gone: Callable[[], None]
) -> Callable[[], None] | None:
    """Call ``on_gone()`` once, in the loop, when the read end of the pipe ``fd`` (a write end)
    is closed. Returns the function that stops watching (idempotent), or ``None`` when ``fd`` is
    not a pipe or cannot be watched."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
    except OSError:
        return None
    watching = True

    def stop() -> None:
        nonlocal watching
        if watching:
            watching = False
            loop.remove_reader(fd)

    def on_event() -> None:
        if not watching:
            return
        if not _in_error(fd):  # not the reader going away: never ours to handle, stop watching
            stop()
            return
        stop()
        on_gone()

    try:
        loop.add_reader(fd, on_event)
    except (OSError, ValueError, NotImplementedError):
        return None
    return stop


def _in_error(fd: int) -> bool:
    """Whether the write end ``fd`` is in error or hung up (the reader closed), without blocking."""
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
