"""The wire stays valid and the daemon stays up, whatever a client sends (issue 12).

One real daemon over stdio per test, raw frames: deep nesting, non-finite numbers, frames without
``Content-Length``, requests named like notifications, malformed notifications and NUL bytes in
paths each get a clear answer (or one WARNING line) and never a crash, a hang or invalid JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.daemon_support import RawServer, server_tmp


def _strict(body: bytes) -> Any:
    """Parse a frame the way an RFC 8259 client does: ``NaN``/``Infinity`` are not JSON."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"the daemon sent {name}, which is not JSON: {body[:300]!r}")

    return json.loads(body, parse_constant=refuse)


def _frames_until(server: RawServer, request_id: Any) -> list[dict[str, Any]]:
    """Every frame up to and including the response to ``request_id``, each strictly parsed."""
    frames = []
    while True:
        message = _strict(server.receive_raw())
        frames.append(message)
        if "method" in message and "id" in message:  # a server request: answer null
            server.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif message.get("id") == request_id and "method" not in message:
            return frames


def _request(server: RawServer, request_id: Any, method: str, params: Any) -> dict[str, Any]:
    server.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    return _frames_until(server, request_id)[-1]


def _still_serving(server: RawServer, request_id: int) -> None:
    reply = _request(server, request_id, "pi/listTools", {})
    assert reply["result"]["tools"]


def _nested(depth: int) -> Any:
    value: Any = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@pytest.fixture
def logged_server(tmp_path: Path):
    log = tmp_path / "daemon.log"
    server = RawServer(tmp_path, server_tmp(tmp_path), "--log-file", str(log))
    server.initialize(tmp_path)
    yield server, log
    server.close()


@pytest.mark.parametrize("where", ["body", "params", "arguments"])
def test_deep_nesting_is_an_error_and_the_daemon_goes_on(raw_server: RawServer, where: str) -> None:
    if where == "body":  # too deep to parse at all: ParseError, id null
        raw_server.send_bytes(b'{"jsonrpc":"2.0","id":1,"method":"pi/listTools","params":' + b"[" * 1000 + b"]" * 1000 + b"}")
        reply = _frames_until(raw_server, None)[-1]
        assert reply["error"]["code"] == -32700 and "nested deeper than" in reply["error"]["message"]
    else:  # parsed, but deeper than the limit: the request still gets its own answer
        params: Any = _nested(300)
        if where == "arguments":
            params = {"toolCall": {"id": "c1", "name": "read", "arguments": {"path": "a", "x": _nested(300)}}}
        reply = _request(raw_server, 1, "pi/executeToolCall" if where == "arguments" else "pi/listTools", params)
        assert reply["error"]["code"] == -32602 and "nested deeper than 128 levels" in reply["error"]["message"]
    # a deep notification is dropped with a warning (no answer is owed), then the daemon serves on
    raw_server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": _nested(900)})
    _still_serving(raw_server, 2)


@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"[1e999, 2]"])
def test_numbers_that_overflow_never_leave_as_bare_infinity(raw_server: RawServer, number: bytes) -> None:
    # the tool call is echoed in pi/event (tool_execution_start) and in the validation error
    raw_server.send_bytes(
        b'{"jsonrpc":"2.0","id":7,"method":"pi/executeToolCall","params":{"toolCall":'
        b'{"id":"c1","name":"read","arguments":{"path":"a.txt","offset":' + number + b"}}}}"
    )
    frames = _frames_until(raw_server, 7)  # each one parsed strictly
    events = [f for f in frames if f.get("method") == "pi/event"]
    start = next(e for e in events if e["params"]["event"]["type"] == "tool_execution_start")
    offset = start["params"]["event"]["args"]["offset"]
    assert offset is None or offset == [None, 2]
    assert frames[-1]["result"]["isError"] is True


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_literals_are_a_parse_error(raw_server: RawServer, literal: bytes) -> None:
    raw_server.send_bytes(b'{"jsonrpc":"2.0","id":3,"method":"pi/listTools","params":{"x":' + literal + b"}}")
    reply = _frames_until(raw_server, None)[-1]
    assert reply["error"]["code"] == -32700 and literal.decode().lstrip("-") in reply["error"]["message"]
    _still_serving(raw_server, 4)


@pytest.mark.parametrize("method", ["initialized", "textDocument/didOpen", "$/cancelRequest", "exit", "pi/event"])
def test_a_request_named_like_a_notification_gets_exactly_one_answer(raw_server: RawServer, method: str) -> None:
    raw_server.send({"jsonrpc": "2.0", "id": "n1", "method": method, "params": {"id": 1}})
    raw_server.send({"jsonrpc": "2.0", "id": "after", "method": "pi/listTools", "params": {}})
    frames = _frames_until(raw_server, "after")
    answers = [f for f in frames if f.get("id") == "n1" and "method" not in f]
    if method == "pi/event":  # not an LSP notification the daemon knows: MethodNotFound
        assert [a["error"]["code"] for a in answers] == [-32601]
    else:
        assert [a["error"]["code"] for a in answers] == [-32600]
        assert "is a notification" in answers[0]["error"]["message"]


MALFORMED_NOTIFICATIONS: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": 5}}},
    {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"contentChanges": "x"}},
    {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": []},
    {"jsonrpc": "2.0", "method": "shutdown"},
    {"jsonrpc": "2.0", "method": "initialize", "params": {"capabilities": 3}},
    {"jsonrpc": "2.0", "method": "workspace/didChangeWorkspaceFolders", "params": {"event": None}},
    {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": [1]}},
]


def test_malformed_notifications_are_one_warning_line_each(logged_server) -> None:
    server, log = logged_server
    for message in MALFORMED_NOTIFICATIONS:
        server.send(message)
    _still_serving(server, 9)
    server.close()
    text = log.read_text(encoding="utf-8")
    assert "Traceback" not in text and " ERROR " not in text, text
    warnings = [line for line in text.splitlines() if " WARNING " in line]
    assert len(warnings) == len(MALFORMED_NOTIFICATIONS), text


def test_a_nul_byte_in_a_path_is_an_error_in_nodes_words(raw_server: RawServer, tmp_path: Path) -> None:
    call = {"id": "c1", "name": "read", "arguments": {"path": "a\u0000b"}}
    result = _request(raw_server, 5, "pi/executeToolCall", {"toolCall": call})["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "The argument 'path' must be a string, Uint8Array, or URL without null bytes. "
        f"Received '{tmp_path}/a\\x00b'"
    )
