"""Asking the editor something the user answers (approvals, edit reviews): one request, waited on
until the daemon stops waiting.

The caller applies its own timeout by cancelling the wait; the editor's request stays open (the
caller withdraws it with its own notification) and an answer that arrives later is only logged.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

logger = logging.getLogger(__name__)


class ClientGone(ConnectionError):
    """The request could not be sent or answered: the editor's connection is gone."""


async def ask_client(protocol: Any, method: str, params: Any) -> Any:
    """Send ``method`` (a server-to-client request) over ``protocol`` and return the client's result.

    Raises :class:`ClientGone` when the connection is gone, ``pygls``' ``JsonRpcException`` for an
    error reply, and ``CancelledError`` when the caller stops waiting (the reply is then logged).
    """
    try:
        future = protocol.send_request_async(method, params)
    except (RuntimeError, ConnectionError) as exc:
        raise ClientGone(f"the editor is gone: {exc}") from exc
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        future.add_done_callback(lambda f: _log_late_answer(method, f))
        raise
    except (RuntimeError, ConnectionError) as exc:
        raise ClientGone(f"the editor is gone: {exc}") from exc


def _log_late_answer(method: str, future: "asyncio.Future[Any]") -> None:
    if not future.cancelled() and future.exception() is None:
        logger.info("a %s answer arrived after the call stopped waiting; ignored: %r", method, future.result())
