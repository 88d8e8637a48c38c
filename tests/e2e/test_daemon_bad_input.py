"""Bad input over the wire: JSON-RPC errors per the spec, and the daemon keeps serving."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcMethodNotFound

from pi_lsp.demo.fake_editor import FakeEditor
from tests.e2e.daemon_support import RawServer


def _still_serving(server: RawServer, request_id: int) -> None:
    server.send({"jsonrpc": "2.0", "id": request_id, "method": "pi/listTools", "params": {}})
    reply = server.receive()
    assert reply["id"] == request_id and reply["result"]["tools"]


def test_result_keys_on_the_wire_are_camel_case(raw_server: RawServer, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hi\n", encoding="utf-8")
    raw_server.send({"jsonrpc": "2.0", "id": 1, "method": "pi/executeToolCall",
                     "params": {"toolCall": {"id": "w", "name": "read", "arguments": {"path": "a.txt"}}}})
    while True:
        body = raw_server.receive_raw()
        message = json.loads(body)
        if message.get("id") == 1:
            break
    assert set(message["result"]) == {"role", "toolCallId", "toolName", "content", "isError", "timestamp"}
    assert b'"toolCallId": "w"' in body.replace(b'":"', b'": "') and b"tool_call_id" not in body
    assert message["result"]["content"] == [{"type": "text", "text": "hi\n"}]


def test_malformed_json_gets_a_parse_error_with_null_id(raw_server: RawServer) -> None:
    raw_server.send_bytes(b'{"jsonrpc": "2.0", "id": 5, "method": ')
    reply = raw_server.receive()
    assert reply["id"] is None and reply["error"]["code"] == -32700
    raw_server.send_bytes(b"\xff\xfe not utf-8")
    assert raw_server.receive()["error"]["code"] == -32700
    _still_serving(raw_server, 6)


@pytest.mark.parametrize(
    "message",
    [
        [1, 2, 3],
        "just a string",
        {"jsonrpc": "1.0", "id": 9, "method": "pi/listTools"},
        {"jsonrpc": "2.0", "id": 9, "method": 42},
        {"jsonrpc": "2.0", "id": 9},
        {"jsonrpc": "2.0", "id": [9], "method": "pi/listTools"},
    ],
)
def test_invalid_requests_get_invalid_request(raw_server: RawServer, message: object) -> None:
    raw_server.send(message)
    reply = raw_server.receive()
    assert reply["error"]["code"] == -32600
    assert reply["id"] == (9 if isinstance(message, dict) and message.get("id") == 9 else None)
    _still_serving(raw_server, 10)


def test_unknown_methods(raw_server: RawServer) -> None:
    raw_server.send({"jsonrpc": "2.0", "id": 3, "method": "pi/teleport", "params": {}})
    reply = raw_server.receive()
    assert reply["id"] == 3 and reply["error"]["code"] == -32601
    raw_server.send({"jsonrpc": "2.0", "method": "pi/unknownNotification", "params": {}})
    raw_server.send({"jsonrpc": "2.0", "method": "$/somethingOptional", "params": {}})
    _still_serving(raw_server, 4)  # notifications of unknown methods are dropped silently


def test_wrong_param_shapes_get_invalid_params(raw_server: RawServer) -> None:
    raw_server.send({"jsonrpc": "2.0", "id": 1, "method": "pi/executeToolCall", "params": {"toolCall": 7}})
    reply = raw_server.receive()
    assert reply["id"] == 1 and reply["error"]["code"] == -32602
    assert "toolCall must be an object" in reply["error"]["message"]
    # a typed LSP request whose params do not fit its type
    raw_server.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
                     "params": {"textDocument": {"uri": "file:///a"}, "position": "top"}})
    reply = raw_server.receive()
    assert reply["id"] == 2 and reply["error"]["code"] == -32602
    assert reply["error"]["message"].startswith("textDocument/hover: invalid params")
    # a typed notification with a bad shape is dropped (nothing to answer)
    raw_server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 3}})
    raw_server.send({"jsonrpc": "2.0", "method": "pi/documentState", "params": {"uri": 1}})
    _still_serving(raw_server, 3)


def test_requests_before_initialize_get_server_not_initialized(tmp_path: Path) -> None:
    server = RawServer(tmp_path, tmp_path)
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "pi/listTools", "params": {}})
        reply = server.receive()
        assert reply["error"]["code"] == -32002
        server.initialize(tmp_path)
        _still_serving(server, 2)
    finally:
        server.close()


async def test_untitled_buffers_are_kept_apart_from_files(make_editor, tmp_path: Path) -> None:
    (tmp_path / "Untitled-1").write_text("the file on disk\n", encoding="utf-8")
    editor: FakeEditor = await make_editor()
    editor.client.text_document_did_open(_item("untitled:Untitled-1", "scratch text\n"))
    editor.client.text_document_did_change(_change("untitled:Untitled-1", 2, "more scratch\n"))
    result = await editor.call("read", {"path": "Untitled-1"})
    assert editor.result_text(result) == "the file on disk\n"  # an untitled buffer is no file
    await editor.call("edit", {"path": "Untitled-1", "edits": [{"oldText": "disk", "newText": "DISK"}]})
    assert all("untitled:" not in json.dumps(e) for e in editor.apply_edits)


async def test_files_outside_every_workspace_folder_are_served_without_harm(make_editor, tmp_path: Path) -> None:
    inside, outside = tmp_path / "ws", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    target = outside / "x.txt"
    target.write_bytes(b"keep\r\nme\r\n")
    editor: FakeEditor = await make_editor(root=inside, message_answer="Allow once")  # outside: asked (issue 9)
    read = await editor.call("read", {"path": str(target)})
    assert editor.result_text(read) == "keep\r\nme\r\n"
    edited = await editor.call("edit", {"path": "../elsewhere/x.txt", "edits": [{"oldText": "me", "newText": "you"}]})
    assert edited["isError"] is False
    assert target.read_bytes() == b"keep\r\nyou\r\n"  # CRLF kept, nothing else touched
    assert len(editor.message_requests) == 2 and all("outside the workspace" in m for m in editor.message_requests)
    assert await editor.request("pi/listTools", {})


async def test_a_50_mb_document_is_handled_and_the_daemon_keeps_running(make_editor, tmp_path: Path) -> None:
    line = "x" * 99 + "\n"
    big = line * (50 * 1024 * 1024 // len(line))
    path = tmp_path / "big.txt"
    path.write_text(big, encoding="utf-8")
    editor: FakeEditor = await make_editor()
    editor.open("big.txt")
    editor.type("big.txt", 0, 1, "Y")  # a keystroke in the 50 MB buffer
    result = await editor.call("read", {"path": "big.txt", "limit": 2})
    assert editor.result_text(result).startswith("Y" + "x" * 98 + "\n" + line)
    assert "[Unsaved changes in the editor" in editor.result_text(result)
    assert path.stat().st_size == len(big)  # the file is untouched
    with pytest.raises(JsonRpcMethodNotFound):
        await editor.request("pi/nothing", {})
    with pytest.raises(JsonRpcInvalidParams):
        await editor.request("pi/setActiveTools", {"names": [1]})
    assert (await editor.request("pi/listTools", {}))["tools"]


def _item(uri: str, text: str):
    from lsprotocol import types

    return types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text=text)
    )


def _change(uri: str, version: int, text: str):
    from lsprotocol import types

    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
    )
