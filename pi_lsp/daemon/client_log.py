"""The daemon's log to the editor as ``window/logMessage`` (issue 15).

Editors show a language server's stderr as errors (Neovim's ``:LspLog`` writes every stderr chunk
as ``[ERROR]``), so routine INFO lines there read as failures. While a client is connected
(from ``initialize`` until the session ends) :class:`ClientLogHandler` sends each record of the
daemon's log as ``window/logMessage`` with its real severity (ERROR -> Error, WARNING -> Warning,
INFO -> Info, DEBUG -> Log), and :class:`QuietWhileConnected` keeps those records off stderr.
Before ``initialize`` and after the session, stderr gets WARNING and above only (``-v`` for all).

Records logged on another thread (the stdin reader) are handed to the event loop; a record logged
while a message is being sent is dropped rather than sent recursively. Sending never raises.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from lsprotocol import types

WINDOW_LOG_MESSAGE = "window/logMessage"

_TYPES = ((logging.ERROR, 1), (logging.WARNING, 2), (logging.INFO, 3))
"""``MessageType`` of a record by its level (the first threshold it reaches; 4 = Log below)."""


def message_type(level: int) -> int:
    """LSP ``MessageType`` (1 Error, 2 Warning, 3 Info, 4 Log) for a :mod:`logging` level."""
    return next((kind for threshold, kind in _TYPES if level >= threshold), 4)


class ClientLogHandler(logging.Handler):
    """A :mod:`logging` handler that sends records to the client once :meth:`connect` ran."""

    def __init__(self, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.protocol: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._sending = threading.local()

    @property
    def connected(self) -> bool:
        """True between :meth:`connect` and :meth:`disconnect`."""
        return self.protocol is not None

    def connect(self, protocol: Any) -> None:
        """Start sending through ``protocol.notify`` (call on the event loop's thread)."""
        self.loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self.protocol = protocol

    def disconnect(self) -> None:
        """Stop sending (the session ends); later records go to the other handlers only."""
        self.protocol = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.protocol is None or getattr(self._sending, "active", False):
            return
        try:
            params = {"type": message_type(record.levelno), "message": self.format(record)}
        except Exception:
            return
        if threading.get_ident() == self._thread:
            self._send(params)
        elif self.loop is not None:
            try:
                self.loop.call_soon_threadsafe(self._send, params)
            except RuntimeError:  # the loop is closed
                pass

    def _send(self, params: dict[str, Any]) -> None:
        protocol = self.protocol
        if protocol is None:
            return
        self._sending.active = True
        try:
            message = types.LogMessageParams(type=types.MessageType(params["type"]), message=params["message"])
            protocol.notify(WINDOW_LOG_MESSAGE, message)
        except Exception:  # the client is gone: nothing to tell it
            self.protocol = None
        finally:
            self._sending.active = False


class QuietWhileConnected(logging.Filter):
    """A filter for the stderr handler: drop records while ``handler`` sends them to the client."""

    def __init__(self, handler: ClientLogHandler) -> None:
        super().__init__()
        self.handler = handler

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.handler.connected


CLIENT_LOG = ClientLogHandler()
"""The daemon's one handler (installed on the root logger by ``stdio_main``)."""
