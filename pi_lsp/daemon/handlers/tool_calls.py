"""The tool methods of the wire contract: ``pi/executeToolCall(s)``, ``pi/listTools``, ``pi/setActiveTools``.

Calls from the client run as the session ``external``; ``$/cancelRequest`` aborts their signal and
the pipeline still answers with a ``ToolResultMessage`` (design.md section 2, Cancellation).
Their ``tool_execution_*`` events go out as ``pi/event`` only to a client that advertises
``experimental.pi.toolEvents`` (the caller already gets the result; two notifications per call
cost more than the call itself, issue 21). The policy decides every call either way, and
approval events are always sent.

Module-level handlers; :func:`pi_lsp.daemon.server.create_server` registers :data:`FEATURES`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pi_lsp.daemon import rpc
from pi_lsp.daemon.pygls_protocol import JsonResult, eager_start

if TYPE_CHECKING:
    from pi_lsp.agent.events import EventSink
    from pi_lsp.daemon.server import PiLanguageServer

logger = logging.getLogger(__name__)


@eager_start  # a small read is answered without a task (issue 21)
async def execute_tool_call(ls: PiLanguageServer, params: Any) -> Any:
    """The ``pi/executeToolCall`` handler."""
    call = rpc.parse_execute_tool_call(params)
    host = ls.require_host()
    with ls.tool_request(external=True) as signal:
        result = await host.pipeline.execute(
            call, signal=signal, session_id=rpc.EXTERNAL_SESSION, emit=_tool_events(ls)
        )
    return rpc.wire_text(result)


@eager_start
async def execute_tool_calls(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/executeToolCalls`` handler."""
    calls, stop_reason = rpc.parse_execute_tool_calls(params)
    host = ls.require_host()
    with ls.tool_request(external=True) as signal:
        results = await host.pipeline.execute_batch(
            calls, stop_reason=stop_reason, signal=signal,
            session_id=rpc.EXTERNAL_SESSION, emit=_tool_events(ls),
        )
    return JsonResult(results=[rpc.wire(result) for result in results])


def _tool_events(ls: PiLanguageServer) -> EventSink | None:
    """The event sink of the client's own tool calls: ``pi/event`` when it asked for them."""
    return ls.events if ls.features.tool_events else None


def list_tools(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/listTools`` handler."""
    rpc.parse_list_tools(params)
    pipeline = ls.require_host().pipeline
    return rpc.tools_listing(pipeline.tools, pipeline.active_names)


def set_active_tools(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """The ``pi/setActiveTools`` handler."""
    names = rpc.parse_set_active_tools(params)
    pipeline = ls.require_host().pipeline
    try:
        return {"active": pipeline.set_active(names)}
    except ValueError as exc:
        raise rpc.invalid_params(rpc.SET_ACTIVE_TOOLS, str(exc)) from exc


FEATURES: list[tuple[Any, ...]] = [
    (rpc.EXECUTE_TOOL_CALL, execute_tool_call),
    (rpc.EXECUTE_TOOL_CALLS, execute_tool_calls),
    (rpc.LIST_TOOLS, list_tools),
    (rpc.SET_ACTIVE_TOOLS, set_active_tools),
]
"""``(method, [options,] handler)`` for ``server.feature``."""
