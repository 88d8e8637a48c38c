"""Unusable ``Content-Length`` headers over real stdio: a ParseError, a log line, and a clean end."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.daemon.stdio_main import MAX_FRAME_BYTES
from tests.e2e.daemon_support import SERVER_COMMAND, server_env, server_tmp


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_frame(stdout) -> dict:
    length = None
    while True:
        line = stdout.readline()
        assert line, "the server closed stdout"
        if not line.strip():
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    assert length is not None
    return json.loads(stdout.read(length))


def _read_reply(stdout: Any) -> dict[str, Any]:
    """The next response, skipping the notifications (``window/logMessage``) sent before it."""
    while "id" not in (message := _read_frame(stdout)):
        pass
    return message


@pytest.mark.parametrize("value", [b"99999999999", str(MAX_FRAME_BYTES + 1).encode(), b"-5", b"abc", b""])
def test_an_unusable_content_length_is_answered_then_the_session_ends(tmp_path: Path, value: bytes) -> None:
    servertmp = server_tmp(tmp_path)
    log = tmp_path / "daemon.log"
    process = subprocess.Popen(
        [*SERVER_COMMAND, "--log-file", str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, cwd=tmp_path, env=server_env(TMPDIR=str(servertmp)),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(_frame({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}))
        process.stdin.flush()
        assert _read_reply(process.stdout)["id"] == 0
        # the session is built right after the initialize reply, at the latest before the next
        # message is handled (issue 21): once pi/listTools is answered, its temp folder exists
        process.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "pi/listTools", "params": {}}))
        process.stdin.flush()
        assert _read_reply(process.stdout)["id"] == 1
        assert list(servertmp.glob("pi-lsp-*"))  # the session's temp folder exists
        # stdin stays open: the daemon must end on its own, not wait for more input
        process.stdin.write(b"Content-Length: " + value + b"\r\n\r\n{}")
        process.stdin.flush()
        while (reply := _read_frame(process.stdout)).get("method"):
            pass  # server notifications sent before the reply
        assert reply["id"] is None and reply["error"]["code"] == -32700
        assert "Content-Length" in reply["error"]["message"]
        assert process.wait(timeout=20) == 1
        assert not list(servertmp.glob("pi-lsp-*"))
        text = log.read_text(encoding="utf-8")
        assert "answering error -32700" in text and "Traceback" not in text
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_spaces_around_a_valid_length_are_accepted(tmp_path: Path) -> None:
    # "Content-Length:  2 " is a valid header: the frame is read and judged as JSON-RPC
    process = subprocess.Popen(
        SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        cwd=tmp_path, env=server_env(TMPDIR=str(server_tmp(tmp_path))),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(b"Content-Length:  2 \r\n\r\n{}")
        process.stdin.flush()
        reply = _read_frame(process.stdout)
        assert reply["id"] is None and reply["error"]["code"] == -32600  # read as a frame, not a bad header
        process.stdin.close()
        assert process.wait(timeout=20) == 1
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    "frame",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"pi/listTools"}',  # a body without any header
        b'Content-Type: application/vscode-jsonrpc\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"pi/listTools"}',
    ],
)
def test_a_frame_without_content_length_is_answered_then_the_session_ends(tmp_path: Path, frame: bytes) -> None:
    # issue 12: it used to swallow every later frame silently (the daemon alive, never answering)
    servertmp = server_tmp(tmp_path)
    process = subprocess.Popen(
        SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        cwd=tmp_path, env=server_env(TMPDIR=str(servertmp)),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(_frame({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}))
        process.stdin.flush()
        assert _read_reply(process.stdout)["id"] == 0
        process.stdin.write(frame + _frame({"jsonrpc": "2.0", "id": 2, "method": "pi/listTools"}))
        process.stdin.flush()
        while (reply := _read_frame(process.stdout)).get("method"):
            pass
        assert reply["id"] is None and reply["error"]["code"] == -32700
        assert "without a Content-Length header" in reply["error"]["message"]
        assert process.wait(timeout=20) == 1
        assert not list(servertmp.glob("pi-lsp-*"))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
