"""The private pygls hooks pi-lsp overrides or calls, pinned (issue 12).

pi-lsp's protocol (:mod:`pi_lsp.daemon.pygls_protocol`, :class:`pi_lsp.daemon.rpc.PiProtocol`)
overrides private methods of pygls 2.1 and reads private attributes. A pygls release may rename,
re-sign or stop calling them, and an override would then silently do nothing. Each test here pins
one hook on pygls's own class (never on pi-lsp's subclass) and fails with a message saying what to
re-check. The last one also pins the leak the daemon works around: when a pygls release stops
keeping notification futures, it fails and the workaround can go.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol

from pi_lsp.daemon.pygls_protocol import RobustLanguageServerProtocol
from pi_lsp.daemon.rpc import PiProtocol

HOOKS: dict[str, list[tuple[str, str]]] = {
    # name -> [(parameter, kind)], self left out
    "_send_handler_result": [("future", "POSITIONAL_OR_KEYWORD"), ("msg_id", "KEYWORD_ONLY")],
    "_handle_cancel_notification": [("msg_id", "POSITIONAL_OR_KEYWORD")],
    "_send_data": [("data", "POSITIONAL_OR_KEYWORD")],
    "handle_message": [("message", "POSITIONAL_OR_KEYWORD")],  # public; overridden for speed
    "_check_handler_result": [("future", "POSITIONAL_OR_KEYWORD")],
    "_execute_handler": [
        ("msg_id", "POSITIONAL_OR_KEYWORD"), ("handler", "POSITIONAL_OR_KEYWORD"),
        ("callback", "POSITIONAL_OR_KEYWORD"), ("args", "POSITIONAL_OR_KEYWORD"),
        ("kwargs", "POSITIONAL_OR_KEYWORD"),
    ],
    "structure_message": [("data", "POSITIONAL_OR_KEYWORD")],
    "_send_response": [("msg_id", "POSITIONAL_OR_KEYWORD"), ("result", "POSITIONAL_OR_KEYWORD"),
                       ("error", "POSITIONAL_OR_KEYWORD")],
    "_serialize_message": [("data", "POSITIONAL_OR_KEYWORD")],
    "get_message_type": [("method", "POSITIONAL_OR_KEYWORD")],
    # public, but PiProtocol overrides it to nudge until the answer (send_request_async calls it)
    "send_request": [("method", "POSITIONAL_OR_KEYWORD"), ("params", "POSITIONAL_OR_KEYWORD"),
                     ("callback", "POSITIONAL_OR_KEYWORD"), ("msg_id", "POSITIONAL_OR_KEYWORD")],
}


def _overridden_private_methods() -> set[str]:
    names = set()
    for cls in (RobustLanguageServerProtocol, PiProtocol):
        for name, value in vars(cls).items():
            if name.startswith("_") and not name.startswith("__") and inspect.isfunction(value):
                if hasattr(LanguageServerProtocol, name):
                    names.add(name)
    return names


def test_every_overridden_pygls_hook_is_pinned_here() -> None:
    missing = _overridden_private_methods() - set(HOOKS)
    assert not missing, f"pi-lsp overrides pygls hooks that this file does not pin: {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_the_hook_exists_with_the_signature_pi_lsp_relies_on(name: str) -> None:
    method = getattr(LanguageServerProtocol, name, None)
    assert method is not None, f"pygls no longer has {name}: pi-lsp's override does nothing now; re-check it"
    parameters = list(inspect.signature(method).parameters.values())[1:]
    got = [(p.name, p.kind.name) for p in parameters]
    assert got == HOOKS[name], f"pygls changed {name}{inspect.signature(method)}: re-check pi-lsp's override"


def test_send_request_async_still_goes_through_send_request() -> None:
    source = inspect.getsource(LanguageServerProtocol.send_request_async)
    assert "self.send_request(" in source, "pygls's send_request_async no longer calls send_request: re-check PiProtocol's nudge"


def test_pyglss_answer_of_a_returned_handler_is_what_send_returned_mirrors() -> None:
    # RobustLanguageServerProtocol._send_returned answers an eager handler's value as pygls's
    # _send_handler_result answers a future holding it, setting the request's id first as _handle_request does
    source = inspect.getsource(LanguageServerProtocol._send_handler_result)
    for line in ("self._request_futures.pop(msg_id, None)", "self._send_response(msg_id, result=future.result())",
                 "except JsonRpcException as exc:", "self._server._report_server_error(exc, FeatureRequestError)",
                 "error = JsonRpcInternalError.of(sys.exc_info())"):
        assert line in source, f"pygls's _send_handler_result changed ({line!r}): re-check _send_returned"
    assert "self._ctx_msg_id.set(msg_id)" in inspect.getsource(LanguageServerProtocol._handle_request)
    # PiLanguageServer.tool_request reads the variable behind protocol.msg_id itself
    assert "ctx.get(self._ctx_msg_id)" in inspect.getsource(JsonRPCProtocol.msg_id.fget)


def test_the_attributes_pi_lsp_reads_exist() -> None:
    server = LanguageServer("contract", "0", protocol_cls=LanguageServerProtocol)
    protocol = server.protocol
    for name in ("_request_futures", "_result_types", "_converter", "_server", "_shutdown", "writer",
                 "_include_headers", "fm"):
        assert hasattr(protocol, name), f"pygls protocol lost {name}"
    assert isinstance(protocol._request_futures, dict) and isinstance(protocol._result_types, dict)
    assert isinstance(JsonRPCProtocol.CHARSET, str) and isinstance(JsonRPCProtocol.CONTENT_TYPE, str)
    assert callable(getattr(server, "_report_server_error", None))
    for builtin in ("lsp_text_document__did_open", "lsp_text_document__did_change",
                    "lsp_text_document__did_close", "lsp_exit"):
        assert hasattr(LanguageServerProtocol, builtin), f"pygls renamed its builtin handler {builtin}"


def test_pygls_still_hands_notification_errors_and_cancels_to_the_hooks() -> None:
    # _handle_notification must route $/cancelRequest to _handle_cancel_notification(params.id)
    # and a notification's outcome to _check_handler_result, or the overrides never run
    source = inspect.getsource(JsonRPCProtocol._handle_notification)
    assert "_handle_cancel_notification(params.id)" in source
    assert "callback=self._check_handler_result" in source
    assert "self._send_handler_result" in inspect.getsource(JsonRPCProtocol._handle_request)


async def test_pygls_still_keeps_notification_futures_so_the_workaround_is_needed() -> None:
    server = LanguageServer("contract", "0", protocol_cls=LanguageServerProtocol)

    @server.feature("contract/notified")
    async def notified(ls: Any, params: Any) -> None:
        return None

    protocol = server.protocol
    for _ in range(3):
        protocol._handle_notification("contract/notified", {})
    for _ in range(3):
        await asyncio.sleep(0)
    kept = [f for f in protocol._request_futures.values() if f.done()]
    assert len(kept) >= 3, (
        "pygls no longer keeps a future per handled notification: remove the _execute_handler "
        "workaround in pi_lsp/daemon/pygls_protocol.py (and this test)"
    )


def test_handle_message_tells_messages_apart_as_pygls_does() -> None:
    # RobustLanguageServerProtocol.handle_message replaces pygls's isinstance checks against its
    # runtime_checkable protocols with field checks: same classification, same handler called
    from lsprotocol import types
    from pygls.protocol import json_rpc

    source = inspect.getsource(JsonRPCProtocol.handle_message)
    for check in ("isinstance(message, RPCRequest)", "isinstance(message, RPCNotification)",
                  "isinstance(message, RPCResponse)", "ctx.run(self._handle_request, message.id, message.method, message.params)",
                  "ctx.run(self._handle_notification, message.method, message.params)",
                  "ctx.run(self._handle_response, message.id, message.result)",
                  "ctx.run(self._handle_response, message.id, None, message.error)"):
        assert check in source, f"pygls changed handle_message ({check!r} is gone): re-check pi-lsp's override"
    server = LanguageServer("contract", "0", protocol_cls=RobustLanguageServerProtocol)
    protocol = server.protocol
    structured = [
        protocol.structure_message({"jsonrpc": "2.0", "id": 1, "method": "contract/x", "params": {}}),
        protocol.structure_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        protocol.structure_message({"jsonrpc": "2.0", "method": "contract/n", "params": {}}),
        protocol.structure_message({"jsonrpc": "2.0", "method": "textDocument/didClose",
                                    "params": {"textDocument": {"uri": "file:///x"}}}),
        protocol.structure_message({"jsonrpc": "2.0", "id": 3, "result": {"a": 1}}),
        protocol.structure_message({"jsonrpc": "2.0", "id": 4, "error": {"code": -1, "message": "m"}}),
    ]
    assert any(isinstance(m, types.ResponseErrorMessage) for m in structured)
    calls: list[str] = []
    protocol._handle_request = lambda *a: calls.append("request")  # type: ignore[method-assign]
    protocol._handle_notification = lambda *a: calls.append("notification")  # type: ignore[method-assign]
    protocol._handle_response = lambda *a: calls.append("error" if len(a) == 3 else "response")  # type: ignore[method-assign]
    expected = []
    for message in structured:
        if isinstance(message, json_rpc.RPCRequest):
            expected.append("request")
        elif isinstance(message, json_rpc.RPCNotification):
            expected.append("notification")
        elif isinstance(message, json_rpc.RPCResponse):
            expected.append("response")
        else:
            expected.append("error")
        protocol.handle_message(message)
    assert calls == expected == ["request", "request", "notification", "notification", "response", "error"]


def _recording_server() -> tuple[LanguageServer, list[bytes]]:
    """A pygls server on the robust protocol (pi-lsp's converter) whose frames are collected."""
    from pi_lsp.editor.lsp_connection import raw_dict_converter

    server = LanguageServer("contract", "0", protocol_cls=RobustLanguageServerProtocol,
                            converter_factory=raw_dict_converter)
    frames: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            frames.append(data)

        def close(self) -> None:
            pass

    server.protocol.set_writer(Writer())
    return server, frames


def test_a_json_result_is_sent_byte_identical_to_pygls_without_cattrs() -> None:
    # JsonResult skips cattrs's walk of a result that is JSON already (issue 21): the frame must be
    # the one pygls's own _send_response builds, and anything else still goes through cattrs
    from pi_lsp.daemon.pygls_protocol import JsonResult

    server, frames = _recording_server()
    protocol = server.protocol
    unstructured: list[Any] = []
    serialize = protocol._serialize_message  # pygls's json default: cattrs's unstructure
    protocol._serialize_message = lambda obj: unstructured.append(obj) or serialize(obj)  # type: ignore[method-assign]
    result = {"content": [{"type": "text", "text": "é\n\"x\" \u2028"}], "details": {"n": 1.5, "none": None,
              "list": [True, False, 0, -1, [], {}]}, "isError": False, "timestamp": 1_700_000_000_000}
    for msg_id in (7, "id-1"):
        JsonRPCProtocol._send_response(protocol, msg_id, result=result)  # pygls's own path
        assert len(unstructured) == 1
        protocol._send_response(msg_id, result=JsonResult(result))
        assert len(unstructured) == 1, "a JsonResult must not go through cattrs"
        assert frames[-1] == frames[-2]
        protocol._send_response(msg_id, result=dict(result))  # a plain dict still does
        assert len(unstructured) == 2 and frames[-1] == frames[-2]
        unstructured.clear()


def test_a_json_text_result_is_put_into_pyglss_frame_as_it_is() -> None:
    # JsonText (a tool result pydantic wrote to JSON, issue 21): the frame is pygls's own frame for
    # the same value, the result's bytes in place of pygls's encoding of it, and a valid frame
    import json

    from pi_lsp.daemon.pygls_protocol import JsonText

    server, frames = _recording_server()
    protocol = server.protocol
    result = {"content": [{"type": "text", "text": "é\n\"x\" \u2028"}], "isError": False}
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode()
    for msg_id in (7, -2, 10**20, "id-1", "é \"q\" \\ \u2028\ud800"):  # ids escaped as pygls escapes them
        JsonRPCProtocol._send_response(protocol, msg_id, result=result)  # pygls's own path
        protocol._send_response(msg_id, result=JsonText(text))
        own_head, own_body = frames[-2].split(b"\r\n\r\n", 1)
        head, body = frames[-1].split(b"\r\n\r\n", 1)
        assert head == f"Content-Length: {len(body)}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8".encode()
        assert json.loads(body) == json.loads(own_body) == {"id": msg_id, "jsonrpc": "2.0", "result": result}
        prefix = own_body[: own_body.index(b'"result": ') + len(b'"result": ')]
        assert body == prefix + text + b"}"


async def test_an_eager_start_handler_answers_in_the_dispatch_step_or_goes_on_as_a_task() -> None:
    # issue 21: a marked coroutine handler runs its first step while the request is handled; done
    # there, it is answered at once (no task); waiting, it goes on as the request's task
    from pi_lsp.daemon.pygls_protocol import eager_start

    server, frames = _recording_server()
    protocol = server.protocol
    gate = asyncio.Event()
    seen: list[Any] = []

    @server.feature("contract/eager")
    @eager_start
    async def eager(ls: LanguageServer, params: Any) -> dict[str, Any]:
        seen.append(ls.protocol.msg_id)
        if params.get("fail"):
            raise ValueError("no")
        if params.get("wait"):
            await gate.wait()
        return {"ok": params.get("wait", False)}

    protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", "id": 1, "method": "contract/eager", "params": {}}))
    assert len(frames) == 1 and frames[0].endswith(b'"result": {"ok": false}}')
    assert 1 not in protocol._request_futures
    protocol.handle_message(protocol.structure_message(
        {"jsonrpc": "2.0", "id": 2, "method": "contract/eager", "params": {"wait": True}}))
    task = protocol._request_futures[2]
    assert isinstance(task, asyncio.Task) and not task.done() and len(frames) == 1
    gate.set()
    await task
    await asyncio.sleep(0)
    assert len(frames) == 2 and frames[1].endswith(b'"result": {"ok": true}}')
    # raised in its first step: answered at once with an error, as pygls answers a failed handler
    protocol.handle_message(protocol.structure_message(
        {"jsonrpc": "2.0", "id": "three", "method": "contract/eager", "params": {"fail": True}}))
    assert len(frames) == 3 and b'"id": "three"' in frames[2] and b'"error"' in frames[2]
    assert "three" not in protocol._request_futures
    assert seen == [1, 2, "three"]  # the request's id is the protocol's msg_id while its handler runs
    # a marked handler whose call itself raises (here a plain function, which eager_start is not
    # meant for): answered with an error, and called once, never again through pygls's path
    calls: list[Any] = []

    @server.feature("contract/refusing")
    @eager_start
    def refusing(ls: LanguageServer, params: Any) -> None:
        calls.append(params)
        raise ValueError("refused")

    protocol.handle_message(protocol.structure_message(
        {"jsonrpc": "2.0", "id": 4, "method": "contract/refusing", "params": {}}))
    await asyncio.sleep(0)
    assert len(frames) == 4 and b'"id": 4' in frames[3] and b'"error"' in frames[3] and b"refused" in frames[3]
    assert len(calls) == 1 and 4 not in protocol._request_futures


def test_a_pi_request_is_structured_as_the_general_path_structures_it() -> None:
    # issue 21: PiProtocol builds pi/* requests itself; the same message as the cattrs path, and
    # lsprotocol has no pi/* method that would need its type
    from lsprotocol import types

    from pi_lsp.daemon.server import create_server

    assert not [method for method in types.METHOD_TO_TYPES if method.startswith("pi/")]
    protocol = create_server().protocol
    for data in (
        {"jsonrpc": "2.0", "id": 3, "method": "pi/executeToolCall", "params": {"toolCall": {"id": "a"}}},
        {"jsonrpc": "2.0", "id": "x", "method": "pi/listTools"},
        {"jsonrpc": "2.0", "id": 4, "method": "pi/listTools", "params": None},
        {"jsonrpc": "2.0", "id": 5, "method": "pi/setActiveTools", "params": [1, 2]},
    ):
        general = RobustLanguageServerProtocol.structure_message(protocol, data)
        mine = protocol.structure_message(data)
        assert type(mine) is type(general) and mine == general
    with pytest.raises(JsonRpcInvalidParams):  # an unknown field is refused, as before
        protocol.structure_message({"jsonrpc": "2.0", "id": 6, "method": "pi/listTools", "extra": 1})
