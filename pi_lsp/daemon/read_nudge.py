"""Nudge a client whose reader may be sitting on messages it has already received (issue 21).

Why: Emacs 28's ``jsonrpc.el`` (the distro's Emacs; stock eglot 1.9 and pi-lsp.el use it) reads the
server's output in its process filter, ``jsonrpc--process-filter``, which loops over the complete
messages of the bytes just read. A synchronous ``jsonrpc-request`` waits in
``accept-process-output``, and its success continuation ``throw``\\ s to the request's catch tag as
soon as the reply is handled: the throw leaves the filter's loop, so the messages that arrived in
the same read *after* the reply stay in the process buffer, unhandled, until more output arrives
and the filter runs again. eglot waits for replies this way for ``workspace/executeCommand`` (a
code action's command, ``eglot-execute-command``), ``textDocument/codeAction``, ``shutdown`` and
others, and its connect catches the ``initialize`` reply the same way. So a
``workspace/applyEdit`` written right after the reply to ``pi.runInstruction`` (the instruction
comment's removal) was handled only when pi-lsp wrote something else, here the error at the
edit's timeout (``edit.applyTimeoutSeconds``); a ``window/showMessage`` written right after
``pi.abort``'s reply would stay unseen for as long as the daemon has nothing else to say.

What: when the output has been quiet for ``pi.nudge.afterSeconds``, :class:`ReadNudge` writes the
notification :data:`NUDGE` (LSP: a ``$/`` notification may be ignored; eglot, pi-lsp.el, Neovim and
vscode-languageclient ignore it silently). Its read runs the filter again, which handles what was
left. A nudge is written

- while a request to the client is unanswered (it may be stuck behind a reply), at doubling
  intervals until the answer comes: a nudge that arrived in the same read as the stuck messages
  (a client that did not read for a while) is stuck too, and a later one frees them all;
- after any message written less than ``afterSeconds`` after a response (the two may share a
  read), ``pi.nudge.trailing`` times at doubling intervals: a notification is never answered,
  so nothing tells that it was read.

A client that reads promptly answers requests before the first nudge and, outside bursts that
follow a response, never sees one; what pi-lsp pays per message is a clock read and a few
comparisons (under a microsecond). An answer never
waits for a nudge: nudges only follow messages that are already written.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable
from typing import Any

NUDGE = "$/pi/nudge"
"""The nudge notification's method (params ``{}``)."""

DEFAULT_AFTER_SECONDS = 0.2
"""``pi.nudge.afterSeconds``: quiet output, in seconds, before a nudge (0: never nudge)."""

DEFAULT_TRAILING = 2
"""``pi.nudge.trailing``: nudges after messages written right after a response."""


class ReadNudge:
    """Decides when to write :data:`NUDGE` (see the module docstring).

    ``send`` writes the nudge; ``timing`` gives the current ``(afterSeconds, trailing)``
    (``afterSeconds`` 0 turns nudging off). Times are the event loop's clock, in seconds.
    Must be used on the event loop's thread.
    """

    def __init__(self, send: Callable[[], None], timing: Callable[[], tuple[float, int]]) -> None:
        self._send = send
        self._timing = timing
        self._last_write = -math.inf
        self._last_response = -math.inf
        self._pending: set[Any] = set()
        self._trailing_left = 0
        self._interval = 0.0
        self._due = math.inf
        self._timer: asyncio.TimerHandle | None = None
        self._nudging = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None

    def wrote(self, message: Any) -> None:
        """Note that ``message`` (the attrs object or dict just written) went out."""
        if self._nudging:
            return
        loop = self._loop_here()
        if loop is None:  # written outside the event loop (start-up, tests): nothing to nudge
            return
        now = loop.time()
        self._last_write = now
        if isinstance(message, dict):
            method = message.get("method")
        else:
            method = getattr(message, "method", None)
        if method is None:  # a response (result or error)
            self._last_response = now
            return
        after, trailing = self._timing()
        if after > 0 and now - self._last_response < after and trailing > 0:
            self._trailing_left = trailing
            self._owe(loop, now, after)

    def _loop_here(self) -> asyncio.AbstractEventLoop | None:
        """The event loop running in this thread, or ``None``; remembered, since Python 3.11's
        ``asyncio.get_running_loop`` makes a ``getpid`` system call and this runs for every
        message written (issue 21)."""
        loop = self._loop
        if loop is not None and self._thread == threading.get_ident() and loop.is_running():
            return loop
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        self._loop, self._thread = loop, threading.get_ident()
        return loop

    def request_sent(self, future: Any) -> None:
        """Nudge until ``future`` (the pygls future of a request just written) is done."""
        after, _ = self._timing()
        if after <= 0 or future.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        self._owe(loop, loop.time(), after)

    def close(self) -> None:
        """Stop nudging (the session ended)."""
        self._pending.clear()
        self._trailing_left = 0
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _owe(self, loop: asyncio.AbstractEventLoop, now: float, after: float) -> None:
        self._interval = after
        self._due = min(self._due, now + after)
        self._arm(loop, self._due)

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            if self._timer.when() <= when:
                return
            self._timer.cancel()
        self._timer = loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if not self._pending and self._trailing_left <= 0:
            self._due = math.inf
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        after, _ = self._timing()
        if after <= 0:
            self.close()
            return
        quiet_from = self._last_write + after
        if now < quiet_from or now < self._due:  # the output is still busy: its next read is the nudge
            self._arm(loop, max(quiet_from, self._due))
            return
        self._nudging = True
        try:
            self._send()
        except OSError:  # the client is gone: the session is ending
            self.close()
            return
        finally:
            self._nudging = False
        self._trailing_left = max(0, self._trailing_left - 1)
        self._interval *= 2
        self._due = now + self._interval
        if self._pending or self._trailing_left:
            self._arm(loop, self._due)
        else:
            self._due = math.inf
