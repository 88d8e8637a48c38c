"""Agent runs (design.md section 6): ``pi/prompt``, ``pi/steer``, ``pi/followUp``, ``pi/sessions``, ``pi/abort``.

The prompt's abort signal is registered like a tool request's, so ``$/cancelRequest`` aborts the
run and the reply still says how it ended.

Module-level handlers; :func:`pi_lsp.daemon.server.create_server` registers :data:`FEATURES`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

from pi_lsp.agent.session_errors import SessionBusy, SessionIdle
from pi_lsp.daemon import rpc

if TYPE_CHECKING:
    from pi_lsp.daemon.server import PiLanguageServer

logger = logging.getLogger(__name__)


async def prompt(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/prompt`` handler."""
    text, session_id = rpc.parse_prompt(params)
    host = ls.require_host()
    with ls.tool_request() as signal:
        try:
            return await ls.agents.prompt(
                text, session_id, host=host, settings=ls.settings, signal=signal
            )
        except SessionBusy as exc:
            raise rpc.request_failed(rpc.PROMPT, str(exc)) from exc
        except ValueError as exc:
            raise rpc.invalid_params(rpc.PROMPT, str(exc)) from exc


def steer(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/steer`` handler."""
    session_id, text = rpc.parse_queued_message(rpc.STEER, params)
    try:
        return ls.agents.queue(session_id, text, follow_up=False)
    except SessionIdle as exc:
        raise rpc.request_failed(rpc.STEER, str(exc)) from exc


def follow_up(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/followUp`` handler."""
    session_id, text = rpc.parse_queued_message(rpc.FOLLOW_UP, params)
    try:
        return ls.agents.queue(session_id, text, follow_up=True)
    except SessionIdle as exc:
        raise rpc.request_failed(rpc.FOLLOW_UP, str(exc)) from exc


def sessions(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/sessions`` handler."""
    rpc.parse_sessions(params)
    return {"sessions": ls.agents.summaries(ls.require_host().env.cwd)}


def abort(ls: PiLanguageServer, params: Any) -> None:
    """The ``pi/abort`` handler."""
    try:
        session_id = rpc.parse_abort(params)
    except JsonRpcException as exc:
        logger.warning("ignored: %s", exc.message)
        return
    if session_id == rpc.EXTERNAL_SESSION:
        if not ls.abort_external():
            logger.info("pi/abort: no external tool call to abort")
        return
    if not ls.agents.abort(session_id):
        logger.info("pi/abort: no run to abort")


FEATURES: list[tuple[Any, ...]] = [
    (rpc.PROMPT, prompt),
    (rpc.STEER, steer),
    (rpc.FOLLOW_UP, follow_up),
    (rpc.SESSIONS, sessions),
    (rpc.ABORT, abort),
]
"""``(method, [options,] handler)`` for ``server.feature``."""
