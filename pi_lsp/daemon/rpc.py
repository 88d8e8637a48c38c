"""The ``pi/*`` wire contract (design.md section 5): method names and parameter parsing.

Custom params arrive as **plain dicts** (see
:func:`pi_lsp.editor.lsp_connection.raw_dict_converter`); every ``parse_*`` function
takes that dict (or whatever JSON value the client sent) and returns typed values, or raises
:class:`pygls.exceptions.JsonRpcInvalidParams` (JSON-RPC code -32602) with a message that names the
method and the offending field, so the client learns what to fix and the daemon keeps running.
Results go out through :func:`wire`, the project's one serialisation (camelCase, no ``None``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, get_args

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.protocol import lsp_method
from pygls.protocol.json_rpc import JsonRPCRequestMessage
from pygls.uris import to_fs_path

from pi_lsp.daemon.pygls_protocol import JsonResult, JsonText, RobustLanguageServerProtocol
from pi_lsp.daemon.read_nudge import DEFAULT_AFTER_SECONDS, DEFAULT_TRAILING, NUDGE, ReadNudge

if TYPE_CHECKING:  # imported where used: answering ``initialize`` needs none of them (issue 21)
    from pi_lsp.llm.types import StopReason, ToolCall, ToolResultMessage

logger = logging.getLogger(__name__)

EXECUTE_TOOL_CALL = "pi/executeToolCall"
EXECUTE_TOOL_CALLS = "pi/executeToolCalls"
LIST_TOOLS = "pi/listTools"
SET_ACTIVE_TOOLS = "pi/setActiveTools"
DOCUMENT_STATE = "pi/documentState"
EVENT = "pi/event"
SAVE_DOCUMENTS = "pi/saveDocuments"
RELOAD_DOCUMENTS = "pi/reloadDocuments"

PROMPT = "pi/prompt"
ABORT = "pi/abort"
CHANGES = "pi/changes"
REVERT_CHANGES = "pi/revertChanges"
KEEP_CHANGES = "pi/keepChanges"
SESSIONS = "pi/sessions"
STEER = "pi/steer"
FOLLOW_UP = "pi/followUp"
HEALTH = "pi/health"
DIAGNOSTICS_CHANGED = "pi/diagnosticsChanged"

REQUEST_FAILED = -32803
"""LSP's RequestFailed error code (a prompt while a run is active)."""

EXTERNAL_SESSION = "external"
"""``sessionId`` of the events of tool calls that arrive over ``pi/executeToolCall(s)``."""

_REQUEST_KEYS = frozenset(("jsonrpc", "id", "method", "params"))
"""The fields of a request whose structuring :meth:`PiProtocol.structure_message` does itself (all but
``params`` present; a message with another field goes the general way, which refuses it)."""


class PiProtocol(RobustLanguageServerProtocol):
    """pygls's LSP protocol, made robust (:mod:`pi_lsp.daemon.pygls_protocol`), with seven changes.

    - ``didOpen``/``didChange``/``didClose`` only reach pi-lsp's handlers (no pygls copy).
    - ``$/cancelRequest`` of a running tool call aborts its signal (a result still comes back).
    - ``exit`` asks the transport to stop instead of calling ``sys.exit`` inside a handler.
    - an expected JSON-RPC error of a request is logged as one WARNING line, without traceback.
    - :meth:`reply_sent` tells when a request's response has been written.
    - a session that ``initialize`` deferred is built before the next message is handled.
    - :attr:`nudge` writes ``$/pi/nudge`` when the client may be sitting on messages it read
      together with a reply (Emacs 28's jsonrpc.el; :mod:`pi_lsp.daemon.read_nudge`).
    """

    _server: Any  # the PiLanguageServer: tool_signals, request_exit(code)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reply_waiters: dict[Any, asyncio.Future[None]] = {}
        self.nudge = ReadNudge(lambda: self.notify(NUDGE, {}), self._nudge_timing)

    def _nudge_timing(self) -> tuple[float, int]:
        settings = getattr(self._server, "_settings", None)  # None until the session parsed them
        if settings is None:
            return DEFAULT_AFTER_SECONDS, DEFAULT_TRAILING
        return settings.nudge.after_seconds, settings.nudge.trailing

    def _send_data(self, data: Any) -> None:
        super()._send_data(data)
        self.nudge.wrote(data)

    def send_request(self, method: str, params: Any | None = None, callback: Any = None, msg_id: Any = None) -> Any:
        """pygls's ``send_request``; the client is nudged until it answers (:mod:`~pi_lsp.daemon.read_nudge`)."""
        future = super().send_request(method, params, callback, msg_id)
        self.nudge.request_sent(future)
        return future

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any):
        if (handler := self.fm.features.get(types.EXIT)) is not None:
            yield handler, args, None
        self._server.request_exit(0 if self._shutdown else 1)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """A ``pi/*`` request (no LSP type: the raw converter's ``JsonRPCRequestMessage`` of its
        four fields) is built directly, without cattrs's dispatch (issue 21); anything else as
        :meth:`RobustLanguageServerProtocol.structure_message` structures it."""
        method = data.get("method")
        if type(method) is str and method.startswith("pi/") and "id" in data and "jsonrpc" in data \
                and data.keys() <= _REQUEST_KEYS:
            return JsonRPCRequestMessage(id=data["id"], method=method, jsonrpc=data["jsonrpc"], params=data.get("params"))
        return super().structure_message(data)

    def handle_message(self, msg: Any) -> None:
        # the session announced by initialize is built before anything else is handled (issue 21)
        if self._server._pending_start is not None:
            self._server.start_pending_session()
        super().handle_message(msg)

    def reply_sent(self, msg_id: Any) -> "asyncio.Future[None]":
        """A future resolved once the response to request ``msg_id`` has been written: a command's
        background work (``pi.runInstruction``) must not reach the client before the command's
        reply, or a client that waits for the reply synchronously (eglot) can mishandle it."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._reply_waiters[msg_id] = waiter
        return waiter

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        try:
            self._send_result(future, msg_id=msg_id)
        finally:
            self._replied(msg_id)

    def _send_returned(self, msg_id: Any, value: Any) -> None:
        try:
            super()._send_returned(msg_id, value)
        finally:
            self._replied(msg_id)

    def _replied(self, msg_id: Any) -> None:
        if self._reply_waiters:
            waiter = self._reply_waiters.pop(msg_id, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def _send_result(self, future: Any, *, msg_id: Any) -> None:
        # An expected error (not initialized, invalid params, request failed) is the client's
        # business: one WARNING line, no traceback. Internal errors keep pygls's full logging.
        if not future.cancelled():
            exc = future.exception()
            if isinstance(exc, JsonRpcException) and not isinstance(exc, JsonRpcInternalError):
                self._request_futures.pop(msg_id, None)
                logger.warning("request %s answered error %d: %s", msg_id, exc.code, exc.message)
                self._send_response(msg_id, error=exc.to_response_error())
                return
        super()._send_handler_result(future, msg_id=msg_id)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if not isinstance(msg_id, (str, int)) or isinstance(msg_id, bool):
            logger.warning("ignored $/cancelRequest: id must be a string or an integer, got %.100r", msg_id)
            return
        signal = self._server.tool_signals.get(msg_id)
        if signal is not None:
            logger.info("tool request %s cancelled by the client", msg_id)
            signal.abort("cancelled by the client")
            return
        super()._handle_cancel_notification(msg_id)


def invalid_params(method: str, message: str) -> JsonRpcInvalidParams:
    """The InvalidParams error (-32602) for ``method``, message prefixed with the method name."""
    return JsonRpcInvalidParams(message=f"{method}: {message}")


def _object(method: str, params: Any, what: str = "params") -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise invalid_params(method, f"{what} must be an object, got {_json_type(params)}")
    return params


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _tool_call(method: str, raw: Any, where: str) -> ToolCall:
    call = _object(method, raw, where) if raw is not None else None
    if call is None:
        raise invalid_params(method, f"{where} is required: {{id, name, arguments}}")
    call_id, name = call.get("id"), call.get("name")
    if not isinstance(call_id, str) or not call_id:
        raise invalid_params(method, f"{where}.id must be a non-empty string")
    if not isinstance(name, str):
        raise invalid_params(method, f"{where}.name must be a string")
    arguments = call.get("arguments", {})
    return _llm_types().tool_call(call_id, name, {} if arguments is None else arguments)  # id and name checked above


def parse_execute_tool_call(params: Any) -> ToolCall:
    """``{toolCall: {id, name, arguments}}`` -> :class:`ToolCall`.

    ``arguments`` may be any JSON value (the pipeline validates it and answers a bad one with
    Pi's validation error *result*); missing or ``null`` means ``{}``.
    """
    obj = _object(EXECUTE_TOOL_CALL, params)
    return _tool_call(EXECUTE_TOOL_CALL, obj.get("toolCall"), "toolCall")


def parse_execute_tool_calls(params: Any) -> tuple[list[ToolCall], StopReason | None]:
    """``{toolCalls: [...], stopReason?}`` -> (calls in source order, stop reason or ``None``)."""
    obj = _object(EXECUTE_TOOL_CALLS, params)
    raw_calls = obj.get("toolCalls")
    if not isinstance(raw_calls, list):
        raise invalid_params(EXECUTE_TOOL_CALLS, "toolCalls must be an array of tool calls")
    calls = [
        _tool_call(EXECUTE_TOOL_CALLS, raw, f"toolCalls[{index}]")
        for index, raw in enumerate(raw_calls)
    ]
    stop_reason = obj.get("stopReason")
    from pi_lsp.llm.types import StopReason

    if stop_reason is not None and stop_reason not in get_args(StopReason):
        allowed = ", ".join(get_args(StopReason))
        raise invalid_params(EXECUTE_TOOL_CALLS, f"stopReason must be one of {allowed}")
    return calls, stop_reason


def parse_list_tools(params: Any) -> None:
    """``{}`` (or ``null``); anything but an object is InvalidParams."""
    _object(LIST_TOOLS, params)


def parse_set_active_tools(params: Any) -> list[str]:
    """``{names: [str]}`` -> the names, in order."""
    names = _object(SET_ACTIVE_TOOLS, params).get("names")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise invalid_params(SET_ACTIVE_TOOLS, "names must be an array of tool names (strings)")
    return list(names)


def parse_document_state(params: Any) -> tuple[str, int, bool]:
    """``{uri, version, dirty}`` -> (uri, version, dirty); the notification of design.md 5."""
    obj = _object(DOCUMENT_STATE, params)
    uri, version, dirty = obj.get("uri"), obj.get("version"), obj.get("dirty")
    if not isinstance(uri, str) or not uri:
        raise invalid_params(DOCUMENT_STATE, "uri must be a non-empty string")
    if not isinstance(version, int) or isinstance(version, bool):
        raise invalid_params(DOCUMENT_STATE, "version must be an integer")
    if not isinstance(dirty, bool):
        raise invalid_params(DOCUMENT_STATE, "dirty must be a boolean")
    return uri, version, dirty


def parse_prompt(params: Any) -> tuple[str, str | None]:
    """``{text, sessionId?}`` -> (text, session id or ``None``); ``text`` must be non-empty."""
    obj = _object(PROMPT, params)
    text, session_id = obj.get("text"), obj.get("sessionId")
    if not isinstance(text, str) or not text.strip():
        raise invalid_params(PROMPT, "text must be a non-empty string")
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise invalid_params(PROMPT, "sessionId must be a non-empty string when given")
    return text, session_id


def parse_abort(params: Any) -> str | None:
    """``{sessionId?}`` -> the session id or ``None`` (abort whatever runs)."""
    session_id = _object(ABORT, params).get("sessionId")
    if session_id is not None and not isinstance(session_id, str):
        raise invalid_params(ABORT, "sessionId must be a string when given")
    return session_id


@dataclass(frozen=True)
class ChangeQuery:
    """``{sessionId, turn? | prompt? | turns?, files?, hunks?}`` of ``pi/changes``,
    ``pi/revertChanges`` and ``pi/keepChanges`` (issue 18).

    At most one of ``turn`` (one model call, 0 for calls over ``pi/executeToolCall``), ``prompt``
    (the session's ``prompt``-th ``pi/prompt`` run, 1-based: what the user asked, all its turns)
    and ``turns`` (``[first, last]``, both included) is set; none: the whole session.
    """

    session_id: str
    turn: int | None = None
    prompt: int | None = None
    turns: tuple[int, int] | None = None
    files: list[str] | None = None
    hunks: list[str] | None = None


def _count(method: str, obj: dict[str, Any], key: str, minimum: int) -> int | None:
    value = obj.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < minimum):
        raise invalid_params(method, f'"{key}" must be an integer of at least {minimum}')
    return value


def parse_change_query(params: Any, method: str = REVERT_CHANGES) -> ChangeQuery:
    """Parse a :class:`ChangeQuery`: ``sessionId`` a non-empty string, ``turn`` a non-negative
    integer, ``prompt`` a positive one, ``turns`` ``[first, last]`` with ``0 <= first <= last``,
    ``files`` absolute paths or file URIs, ``hunks`` hunk ids. InvalidParams otherwise."""
    obj = _object(method, params)
    session_id = obj.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise invalid_params(method, '"sessionId" must be a non-empty string')
    turn = _count(method, obj, "turn", 0)
    prompt = _count(method, obj, "prompt", 1)
    turns = obj.get("turns")
    if turns is not None:
        if not (isinstance(turns, list) and len(turns) == 2
                and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in turns)
                and turns[0] <= turns[1]):
            raise invalid_params(method, '"turns" must be [first, last], non-negative integers with first <= last')
        turns = (turns[0], turns[1])
    if sum(x is not None for x in (turn, prompt, turns)) > 1:
        raise invalid_params(method, 'give at most one of "turn", "prompt" and "turns"')
    lists: list[list[str] | None] = []
    for key in ("files", "hunks"):
        value = obj.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise invalid_params(method, f'"{key}" must be an array of strings')
        lists.append(value)
    files = [to_fs_path(f) if f.startswith("file:") else f for f in lists[0]] if lists[0] is not None else None
    return ChangeQuery(session_id, turn, prompt, turns, files, lists[1])


def parse_queued_message(method: str, params: Any) -> tuple[str, str]:
    """``{sessionId, text}`` of ``pi/steer`` / ``pi/followUp`` -> (session id, text); both must
    be non-empty strings."""
    obj = _object(method, params)
    session_id, text = obj.get("sessionId"), obj.get("text")
    if not isinstance(session_id, str) or not session_id:
        raise invalid_params(method, "sessionId must be a non-empty string")
    if not isinstance(text, str) or not text.strip():
        raise invalid_params(method, "text must be a non-empty string")
    return session_id, text


def parse_sessions(params: Any) -> None:
    """``{}`` (or ``null``); anything but an object is InvalidParams."""
    _object(SESSIONS, params)


def request_failed(method: str, message: str) -> JsonRpcException:
    """The RequestFailed error (-32803) for ``method``, message prefixed with the method name."""
    return JsonRpcException(message=f"{method}: {message}", code=REQUEST_FAILED)


def wire(message: ToolResultMessage) -> JsonResult:
    """A tool result as it goes on the wire (camelCase keys, ``None`` left out); JSON already
    (``model_dump(mode="json")``), so the protocol sends it without cattrs."""
    return JsonResult(_llm_types().to_wire(message))


def wire_text(message: ToolResultMessage) -> JsonText | JsonResult:
    """:func:`wire` as JSON text (:func:`pi_lsp.llm.types.to_wire_json`: the same values, no dict
    built, compact), the result of ``pi/executeToolCall``; :func:`wire` for text pydantic cannot
    write as UTF-8 (a lone surrogate)."""
    types = _llm_types()
    try:
        return JsonText(types.to_wire_json(message))
    except ValueError:
        return JsonResult(types.to_wire(message))


@functools.cache
def _llm_types() -> ModuleType:
    """:mod:`pi_lsp.llm.types`, imported on the first tool call, not to answer ``initialize``
    (issue 21); looked up once, since an ``import`` statement costs about a microsecond per run."""
    import pi_lsp.llm.types

    return pi_lsp.llm.types


def tools_listing(tools: dict[str, Any], active: list[str]) -> dict[str, Any]:
    """The ``pi/listTools`` result: ``{tools: [{name, label, description, parameters, active,
    unavailable?}]}``.

    ``tools`` maps names to tools in registration order; ``active`` lists the active names.
    ``unavailable`` is the reason a tool cannot work in this session (a language tool whose method
    the editor does not offer, issue 17), given whether it is active or not.
    """
    from pi_lsp.agent.tool import describe_tool

    listing = []
    for name, tool in tools.items():
        entry = describe_tool(tool, name in active)
        reason = getattr(tool, "unavailable", None)
        if isinstance(reason, str):
            entry["unavailable"] = reason
        listing.append(entry)
    return {"tools": listing}
