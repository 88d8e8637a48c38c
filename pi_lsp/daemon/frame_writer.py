"""The daemon's output stream: fewer writes per tool call, without delaying the first frame (issue 21).

A tool call of a client that asked for ``toolEvents`` produces three frames: ``tool_execution_start``
as it starts, then ``tool_execution_end`` and the response when it is done. pygls's
``StdoutWriter`` writes and flushes each: three ``write`` system calls, each waking the client
(about 100 us apiece on a busy 2-core machine). :class:`CoalescingWriter` writes a frame at once
when nothing was written in the current step of the event loop (the client can handle
``tool_execution_start`` while the tool runs), and buffers the frames that follow in the same
step until the loop's next iteration (``loop.call_later(0, ...)``, which runs after the callbacks
already queued) or until the protocol writes a response (:meth:`CoalescingWriter.write_now`,
:func:`pi_lsp.daemon.pygls_protocol._is_response`): ``tool_execution_end`` leaves with the
response, in one system call, and nothing written after a response joins its write. Frames keep
their order.

A frame written on another thread, or while the loop is not running, is flushed at once (with
whatever is buffered before it), as ``StdoutWriter`` did. A flush that fails on a closed pipe
raises ``BrokenPipeError`` to the writer of the frame (the protocol logs it), or is one WARNING
line when it happens in the loop's callback.
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
        """Write one frame (``data``: header and body bytes): at once when it is the first of
        this loop step, else buffered until a response or the loop's next iteration."""
        self._stream.write(data)
        if threading.get_ident() != self._thread or not self._loop.is_running():
            self._stream.flush()
            return
        if not self._flush_queued:
            self._stream.flush()
            self._flush_queued = True
            self._loop.call_later(0, self.flush)

    def write_now(self, data: bytes) -> None:
        """Write one frame and flush it at once, with every frame buffered before it: the frame
        that ends what a step has to say (the protocol's responses). Nothing is queued for the
        loop's next iteration on its account, so a request answered in one step costs one
        ``write`` system call and no further callback (issue 21). Raises ``BrokenPipeError``
        (the protocol logs it) as :meth:`write` does."""
        self._stream.write(data)
        self._stream.flush()
        self._flush_queued = False  # a flush already queued finds nothing to write, the next frame leaves at once

    def flush(self) -> None:
        """Write out every buffered frame now (the next frame is again written at once); never
        raises (a failure is logged)."""
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
