"""pygls's LSP protocol with the JSON-RPC fixes pi-lsp needs whatever it serves (issue 12).

:class:`RobustLanguageServerProtocol` changes four behaviours of pygls 2.1 (each checked by
``tests/test_pygls_contract.py``, which fails loudly when a pygls release changes the hook):

- ``structure_message``: a message that does not fit its LSP type raises InvalidParams without
  pygls's ERROR-level traceback (the transport logs one WARNING line or answers the request); a
  request (with ``id``) whose method is an LSP *notification* (``initialized``,
  ``textDocument/didOpen``, ``$/cancelRequest``...) raises InvalidRequest, so it gets its one
  answer instead of being handled as a notification and never answered.
- ``_send_data``: every outgoing message is serialised by :func:`pi_lsp.llm.json_text.dumps`, so
  nothing pi-lsp sends is invalid JSON (a ``NaN``, an infinity or ``1e400`` from a client or a
  model becomes ``null``, as JavaScript's ``JSON.stringify`` does), and ``Content-Length``
  counts bytes; a response is flushed as soon as it is written (see
  :func:`_is_response`).
- ``_check_handler_result``: a notification handler that refuses its input with a JSON-RPC
  error (``didOpen`` before ``initialize``) is one WARNING line, not an ERROR.
- ``_execute_handler``: pygls 2.1.1 keeps the future of every handled notification (and of every
  sub-handler a generator handler yields to) in ``_request_futures`` forever, about 2 KB per
  ``didChange``. The entry is removed when its future is done, unless it was replaced meanwhile.

And one for speed: ``handle_message`` tells requests, notifications and responses apart by the
fields they have, as pygls does with ``isinstance`` against its ``runtime_checkable`` protocols,
which costs 10 to 20 us per check on Python 3.11 (the protocol's members are collected anew each
time), one to three checks per message (issue 21). ``_send_response``: a result marked
:class:`JsonResult` (JSON already) is sent as the plain dict pygls's converter would build from
it, without cattrs walking it (about 12 us of a small read's response, issue 21).
``_execute_handler``: a handler marked :func:`eager_start` runs its first step at once; a request
of such a handler is started by ``handle_message`` itself (not pygls's ``_handle_request``) and,
when that step returns, answered without a future (:meth:`RobustLanguageServerProtocol._send_returned`).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import sys
from functools import partial
from typing import Any

import cattrs
from json.encoder import encode_basestring_ascii as _encode_string
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    RPCNotification,
    RPCRequest,
    RPCResponse,
)
from lsprotocol.types import EXIT, ResponseErrorMessage

from pi_lsp.agent.eager import RAISED, RETURNED, WAITING, eager_future, first_step
from pi_lsp.llm import json_text

logger = logging.getLogger(__name__)
pygls_logger = logging.getLogger("pygls.protocol.json_rpc")  # the lines pygls's handle_message logs

_REQUEST_FIELDS = tuple(RPCRequest.__annotations__)  # id, method, jsonrpc, params
_NOTIFICATION_FIELDS = tuple(RPCNotification.__annotations__)  # method, jsonrpc, params
_RESPONSE_FIELDS = tuple(RPCResponse.__annotations__)  # id, jsonrpc, result


def _is_response(data: Any) -> bool:
    """Whether ``data`` (an attrs message or a plain dict) is a response: an ``id``, no ``method``.

    A response is flushed as soon as it is written (:mod:`pi_lsp.daemon.frame_writer` buffers the
    frames of one loop step): what came before it (the ``pi/event`` notifications of a tool call) leaves in
    the same write, nothing written after it joins that write. A client that handles the reply
    to a synchronous request can leave what it read together with it unhandled (Emacs 28's
    jsonrpc.el), so messages after a response go out as they did before, in later writes.
    """
    if isinstance(data, dict):
        return "id" in data and "method" not in data
    return hasattr(data, "id") and not hasattr(data, "method")


class JsonResult(dict):  # type: ignore[type-arg]
    """A request's result that is JSON already: string keys, and values that are only ``dict``,
    ``list``, ``str``, ``int``, ``float``, ``bool`` or ``None`` all the way down (what
    ``model_dump(mode="json")`` returns). Build one only from such a value (``JsonResult(value)``,
    a shallow copy); the protocol then sends it as it is.

    pygls unstructures every response with cattrs, which for such a value rebuilds each dict and
    list unchanged; ``tests/test_pygls_contract.py`` checks the frames are byte-identical.
    """

    __slots__ = ()


class JsonText:
    """A request's result written as JSON text already (``data``: UTF-8 bytes of one JSON value,
    e.g. :func:`pi_lsp.llm.types.to_wire_json`'s). The protocol puts it into the response frame as
    it is: nothing is converted, copied into dicts or encoded again (issue 21). Only for methods
    without an LSP result type (``pi/*``)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def eager_start(handler: Any) -> Any:
    """Mark the coroutine request handler ``handler`` to start at once, not as a task (issue 21).

    Its first step runs while the request is dispatched (:func:`pi_lsp.agent.eager.eager_future`):
    a call that never waits, a small read of an open document, is answered in the same step,
    without a task and an event-loop iteration; one that waits goes on as a task, as any handler.
    During that first step ``asyncio.current_task()`` is the dispatcher's, not the request's: a
    marked handler must not keep it (the request's task is ``_request_futures[msg_id]``).
    """
    handler.eager_start = True
    return handler


def _response_head(msg_id: Any) -> bytes:
    """The bytes of a response to ``msg_id`` up to its result: ``{"id": 4, "jsonrpc": "2.0", "result": ``,
    as :func:`pi_lsp.llm.json_text.dumps` writes that object (``json``'s default separators, ASCII).

    An ``int`` or ``str`` id (what JSON-RPC allows a request) is written by hand, with ``json``'s
    own string escaper: the encoder costs more than the rest of a small read's response (issue 21).
    """
    if type(msg_id) is int:
        text = repr(msg_id)
    elif type(msg_id) is str:
        text = _encode_string(msg_id)
    else:
        head = json_text.dumps({"id": msg_id, "jsonrpc": JsonRPCProtocol.VERSION, "result": None})
        return head[: -len("null}")].encode("ascii")
    return b'{"id": ' + text.encode("ascii") + _HEAD_REST


_HEAD_REST = f', "jsonrpc": "{JsonRPCProtocol.VERSION}", "result": '.encode("ascii")


_UNSEEN = object()


def _is_eager(handler: Any) -> bool:
    """Whether ``handler`` (or the function a ``functools.partial`` wraps) is marked :func:`eager_start`."""
    return getattr(getattr(handler, "func", handler), "eager_start", False)


def _has_fields(message: Any, fields: tuple[str, ...]) -> bool:
    """``isinstance(message, P)`` for a ``runtime_checkable`` protocol ``P`` of data members only
    (what Python 3.11 checks: every member is an attribute of ``message``), ``fields`` its members."""
    for name in fields:
        if not hasattr(message, name):
            return False
    return True


class RobustLanguageServerProtocol(LanguageServerProtocol):
    """``LanguageServerProtocol`` whose input errors are quiet, whose output is valid JSON and whose
    bookkeeping does not grow with every notification (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._finished: list[tuple[Any, Any]] = []
        """(request id, future) of handlers done since the last handler execution."""
        self._loop_seen: asyncio.AbstractEventLoop | None = None
        self._eager_handlers: dict[str, Any] = {}
        """Registered request methods -> their :func:`eager_start` handler, or ``None`` (see :meth:`_eager_handler`)."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """``data`` (a decoded JSON-RPC object) as pygls's typed message.

        Raises ``JsonRpcInvalidRequest`` for a request whose method is a notification,
        ``JsonRpcInvalidParams`` (cause: the cattrs error) when the params do not fit the type,
        ``JsonRpcInternalError`` for anything else structuring raised. Logs nothing: the caller
        answers or logs one line.
        """
        if "jsonrpc" not in data:
            return data
        method = data.get("method")
        if "id" in data and "error" not in data and isinstance(method, str):
            message_type = self.get_message_type(method)
            if message_type is not None and "id" not in {
                field.name for field in getattr(message_type, "__attrs_attrs__", ())
            }:
                raise JsonRpcInvalidRequest(
                    message=f'Invalid Request: "{method}" is a notification and cannot be sent as a request (with an "id")'
                )
        try:
            if "id" in data:
                if "error" in data:
                    return self._converter.structure(data, ResponseErrorMessage)
                if isinstance(method, str):
                    return self._converter.structure(data, self.get_message_type(method) or JsonRPCRequestMessage)
                result_type = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
                return self._converter.structure(data, result_type)
            message_type = self.get_message_type(method or "") or JsonRPCNotification
            return self._converter.structure(data, message_type)
        except (cattrs.BaseValidationError, TypeError, ValueError, KeyError, AttributeError) as exc:
            raise JsonRpcInvalidParams() from exc
        except RecursionError as exc:
            raise JsonRpcInvalidParams(message="params nested too deeply") from exc
        except Exception as exc:
            raise JsonRpcInternalError() from exc

    def handle_message(self, message: Any) -> None:
        """Hand a structured message to pygls's request, notification or response handling, each
        run in its own copy of the context; pygls's ``handle_message`` with cheaper type checks
        (see the module docstring)."""
        if message.jsonrpc != JsonRPCProtocol.VERSION:
            pygls_logger.warning('Unknown message "%s"', message)
            return
        if self._shutdown and getattr(message, "method", "") != EXIT:
            pygls_logger.warning("Server shutting down. No more requests!")
            return
        context = contextvars.copy_context()
        if _has_fields(message, _REQUEST_FIELDS):
            pygls_logger.debug("Request %r received", message.method)
            method = message.method
            handler = self._eager_handlers.get(method, _UNSEEN)
            if handler is _UNSEEN:
                handler = self._eager_handler(method)
            if handler is None:
                context.run(self._handle_request, message.id, method, message.params)
            else:
                context.run(self._handle_eager_request, handler, message.id, method, message.params)
        elif _has_fields(message, _NOTIFICATION_FIELDS):
            pygls_logger.debug("Notification %r received", message.method)
            context.run(self._handle_notification, message.method, message.params)
        elif _has_fields(message, _RESPONSE_FIELDS):
            pygls_logger.debug("Response message received.")
            context.run(self._handle_response, message.id, message.result)
        else:
            pygls_logger.debug("Error message received.")
            context.run(self._handle_response, message.id, None, message.error)

    def _send_response(self, msg_id: Any, result: Any | None = None, error: Any | None = None) -> None:
        """pygls's ``_send_response``; a :class:`JsonResult` goes out without cattrs (the same
        ``{"id", "jsonrpc", "result"}`` object pygls's converter builds from it)."""
        if error is None and msg_id not in self._result_types:
            if type(result) is JsonResult:
                self._send_data({"id": msg_id, "jsonrpc": JsonRPCProtocol.VERSION, "result": result})
                return
            if type(result) is JsonText:  # the frame pygls would write, with the result's own text
                self._write_frame(_response_head(msg_id) + result.data + b"}", response=True)
                return
        super()._send_response(msg_id, result, error)

    def _send_data(self, data: Any) -> None:
        """Serialise ``data`` (an attrs message or a plain dict) and write one frame."""
        if not data:
            return
        try:
            body = json_text.dumps(data, default=self._serialize_message).encode(self.CHARSET)
        except (TypeError, ValueError, RecursionError):
            logger.exception("a message could not be serialised; it was not sent")
            return
        self._write_frame(body, response=_is_response(data))

    def _write_frame(self, body: bytes, *, response: bool) -> None:
        """Write one message's JSON ``body`` (bytes) with its headers; a ``response`` leaves at once
        (:func:`_is_response`)."""
        if self.writer is None:
            logger.error("cannot send a message: no transport")
            return
        frame = body
        if self._include_headers:
            header = (
                f"Content-Length: {len(body)}\r\n"
                f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            )
            frame = header.encode("ascii") + body
        try:
            if response and (write_now := getattr(self.writer, "write_now", None)) is not None:
                write_now(frame)  # the response leaves now, with what came before it
                return
            res = self.writer.write(frame)
            if res is not None and inspect.isawaitable(res):
                asyncio.ensure_future(res)
            if response and (flush := getattr(self.writer, "flush", None)) is not None:
                flush()  # a buffering writer: the response leaves now, with what came before it
        except BrokenPipeError:
            logger.warning("cannot send a message: the client closed the pipe")
            raise
        except Exception as error:
            logger.exception("sending a message failed")
            self._server._report_server_error(error, JsonRpcInternalError)

    def _check_handler_result(self, future: Any) -> None:
        """A notification handler's outcome: an expected JSON-RPC error (sent before
        ``initialize``, bad params) is the client's input and one WARNING line; anything else is
        reported by pygls (the server logs it at ERROR)."""
        if not future.cancelled():
            exc = future.exception()
            if isinstance(exc, JsonRpcException) and not isinstance(exc, JsonRpcInternalError):
                logger.warning("a notification was refused: %s", exc.message or exc)
                return
        super()._check_handler_result(future)

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """pygls's handler execution; the handler's future is forgotten once it is done; a
        coroutine handler marked by :func:`eager_start` starts in this step.

        A done future is only queued here and removed from ``_request_futures`` at the next
        handler execution: pygls iterates that dict while it cancels futures (``shutdown``), and
        a ``concurrent.futures.Future`` runs its callbacks inside ``cancel()``, so removing it
        from the callback would change the dict during that iteration.
        """
        if self._finished:
            self._forget_finished()
        if _is_eager(handler):
            future = eager_future(handler(*(args or ()), **(kwargs or {})), self._running_loop())
            self._answer_or_track(msg_id, future, callback)
            return
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(lambda done, key=msg_id: self._finished.append((key, done)))

    def _answer_or_track(self, msg_id: Any, future: Any, callback: Any) -> None:
        """An eagerly started handler's ``future``: a done one is answered now (as pygls answers a
        synchronous handler), one still running is kept in ``_request_futures`` until it is done."""
        if future.done():
            try:
                callback(future)
            except Exception:  # as a failing done callback of a task: logged, not answered again
                logger.exception("sending the answer to request %s failed", msg_id)
            return
        self._request_futures[msg_id] = future
        future.add_done_callback(callback)
        future.add_done_callback(lambda done, key=msg_id: self._finished.append((key, done)))

    def _handle_eager_request(self, handler: Any, msg_id: Any, method_name: str, params: Any) -> None:
        """pygls's ``_handle_request`` for a request whose ``handler`` is marked :func:`eager_start`:
        started here, and answered here when its first step returns, without pygls's future,
        callback ``partial`` and the calls between them (issue 21): what pygls's
        ``_send_handler_result`` does with a future that holds the value, :meth:`_send_returned`
        does with the value. Any other outcome is a future, handled as pygls would."""
        self._ctx_msg_id.set(msg_id)
        if self._finished:
            self._forget_finished()
        try:
            coro = handler(params)
        except Exception as exc:  # the call itself failed: answered as pygls answers a handler that raised
            future = self._settled(RAISED, exc)  # (never called a second time, through pygls)
        else:
            future = self._start_eager(msg_id, coro)
            if future is None:
                return
        self._answer_or_track(msg_id, future, partial(self._send_handler_result, msg_id=msg_id))

    def _start_eager(self, msg_id: Any, coro: Any) -> asyncio.Future[Any] | None:
        """Step what an eager handler's call returned: ``None`` when its first step returned and the
        answer was sent, else the future of its outcome (waiting, raised, cancelled, or not a
        coroutine)."""
        if not asyncio.iscoroutine(coro):
            return eager_future(coro)
        state, payload = first_step(coro)
        if state == RETURNED:
            try:
                self._send_returned(msg_id, payload)
            except Exception:  # as _answer_or_track: logged, not answered again
                logger.exception("sending the answer to request %s failed", msg_id)
            return None
        return payload if state == WAITING else self._settled(state, payload)

    def _eager_handler(self, method_name: str) -> Any:
        """The handler of ``method_name`` when it is marked :func:`eager_start`, else ``None``;
        remembered for a registered method (pygls refuses to register one twice), so the
        requests of other handlers pay one dictionary lookup in :meth:`handle_message` for it."""
        fm = self.fm
        if method_name in fm.builtin_features:
            handler = None
        else:
            handler = fm.features.get(method_name)
            if handler is None:  # not registered (yet): MethodNotFound, remembered nowhere
                return None
            if not _is_eager(handler):
                handler = None
        self._eager_handlers[method_name] = handler
        return handler

    def _settled(self, state: int, payload: Any) -> asyncio.Future[Any]:
        """A done future holding a :func:`~pi_lsp.agent.eager.first_step` outcome that raised
        (``RAISED``, the exception) or was cancelled (``CANCELLED``)."""
        done: asyncio.Future[Any] = self._running_loop().create_future()
        if state == RAISED:
            done.set_exception(payload)
        else:
            done.cancel()
        return done

    def _send_returned(self, msg_id: Any, value: Any) -> None:
        """pygls's ``_send_handler_result`` for a future whose result is ``value``: the response,
        or an error response (logged and reported as pygls does) when sending it raised."""
        self._request_futures.pop(msg_id, None)
        try:
            self._send_response(msg_id, result=value)
        except JsonRpcException as exc:
            pygls_logger.exception('Exception occurred for message "%s"', msg_id)
            self._send_response(msg_id, error=exc.to_response_error())
            self._server._report_server_error(exc, FeatureRequestError)
        except Exception:
            error = JsonRpcInternalError.of(sys.exc_info())
            pygls_logger.exception('Exception occurred for message "%s"', msg_id)
            self._send_response(msg_id, error=error.to_response_error())
            self._server._report_server_error(error, FeatureRequestError)

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        """The running event loop (this is its thread), remembered: Python 3.11's
        ``asyncio.get_running_loop`` makes a ``getpid`` system call each time (issue 21)."""
        loop = self._loop_seen
        if loop is None or not loop.is_running():
            loop = self._loop_seen = asyncio.get_running_loop()
        return loop

    def _forget_finished(self) -> None:
        finished = self._finished
        while finished:
            msg_id, future = finished.pop()
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
