"""The daemon's output stream: the frames of one event-loop step leave in one write (issue 21).

A tool call of a client that asked for ``toolEvents`` produces three frames in one step of the event
loop: ``tool_execution_start``, ``tool_execution_end`` and the response. pygls's ``StdoutWriter``
writes and flushes each, so each is a ``write`` system call that wakes the client: on a busy
2-core machine about 100 us apiece, more than the rest of a small read. :class:`CoalescingWriter`
buffers the frames written on the event loop's thread and flushes once, in a callback timed on
the first frame for "now" (``loop.call_later(0, ...)``): the loop runs it in its next iteration
after the callbacks already queued, such as the one that sends the response of the handler that
just emitted the events. The frames leave in order, in one system call. The protocol flushes a
response as soon as it is written (:func:`pi_lsp.daemon.pygls_protocol._is_response`): the
events of a tool call leave with its response, and nothing written after a response joins it.

A frame written on another thread, or while the loop is not running, is flushed at once (with
whatever is buffered before it), as ``StdoutWriter`` did. A client that closed the pipe is one
WARNING line per failed flush; the frames stay buffered until the session ends.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import BinaryIO

logger = logging.getLogger(__name__)


class CoalescingWriter:
    """pygls's writer interface (``write``, ``close``) over a binary stream; see the module docstring.

    Create it on the event loop's thread, with that loop running.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._flush_queued = False

    def write(self, data: bytes) -> None:
        """Buffer one frame (``data``: header and body bytes); it is flushed in the loop's next
        iteration, or now when called off the loop's thread or with the loop stopped."""
        self._stream.write(data)
        if threading.get_ident() != self._thread or not self._loop.is_running():
            self._stream.flush()
            return
        if not self._flush_queued:
            self._flush_queued = True
            self._loop.call_later(0, self.flush)

    def flush(self) -> None:
        """Write out every buffered frame now; never raises (a failure is logged)."""
        self._flush_queued = False
        try:
            self._stream.flush()
        except BrokenPipeError:
            logger.warning("cannot send a message: the client closed the pipe")
        except (OSError, ValueError):  # ValueError: the stream was closed
            logger.warning("cannot send the buffered messages", exc_info=True)

    def close(self) -> None:
        """Flush and close the stream."""
        self.flush()
        self._stream.close()
