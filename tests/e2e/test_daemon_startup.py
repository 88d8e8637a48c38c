"""The daemon answers ``initialize`` before it builds the session (issue 21), losing nothing.

The reply needs only pygls and the handler tables; the settings, the tool host and the policy are
built right after it is written, or before the next message is handled if that arrives first.
These tests send everything in one write (``initialize`` and what follows, before reading a byte),
over a real ``python -m pi_lsp`` on stdio: the messages that follow must all be handled, in order,
against the session ``initialize`` announced. A subprocess also checks that answering
``initialize`` does not import the session's modules (pydantic, the tools), which is what makes
it fast (the time itself is measured by ``bench/bench_call.py --rows start``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.daemon_support import REPO, SERVER_COMMAND, server_env, server_tmp

BOUND = 60.0


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_until(stdout: Any, msg_id: int) -> list[dict[str, Any]]:
    """Every message up to and including the response to ``msg_id``."""
    seen: list[dict[str, Any]] = []
    while not any(m.get("id") == msg_id and "method" not in m for m in seen):
        length = 0
        while (header := stdout.readline().strip()):
            if header.lower().startswith(b"content-length:"):
                length = int(header.split(b":")[1])
        assert length, f"the daemon closed its output; got {seen}"
        seen.append(json.loads(stdout.read(length)))
    return seen


def test_messages_sent_with_initialize_are_handled_in_order_against_the_new_session(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("on disk\n", encoding="utf-8")
    uri = (tmp_path / "a.txt").as_uri()
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {"workspace": {"applyEdit": True}},
            # a bad value: its warning must still come, once; the good one must apply
            "initializationOptions": {"pi": {"bash": {"timeoutSeconds": "soon"}, "activeTools": ["read"]}}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "plaintext", "version": 1, "text": "on disk\n"}}},
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "unsaved 2\n"}]}},
        {"jsonrpc": "2.0", "id": 2, "method": "pi/executeToolCall", "params": {
            "toolCall": {"id": "r", "name": "read", "arguments": {"path": "a.txt"}}}},
        {"jsonrpc": "2.0", "id": 3, "method": "pi/listTools", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "shutdown"},
    ]
    proc = subprocess.Popen(
        SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO,
        env=server_env(TMPDIR=str(server_tmp(tmp_path))),
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(_frame(f) for f in frames))
        proc.stdin.flush()
        seen = _read_until(proc.stdout, 4)
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.close()
        assert proc.wait(BOUND) == 0
    finally:
        proc.kill()
        proc.wait()
    replies = {m["id"]: m for m in seen if "method" not in m}
    assert replies[1]["result"]["serverInfo"]["name"] == "pi-lsp"
    assert "executeCommandProvider" in replies[1]["result"]["capabilities"]
    read = replies[2]["result"]
    assert read["isError"] is False and read["content"][0]["text"].startswith("unsaved 2\n")  # the editor's buffer
    assert [t["name"] for t in replies[3]["result"]["tools"] if t["active"]] == ["read"]
    assert replies[4] == {"jsonrpc": "2.0", "id": 4, "result": None}
    shown = [m["params"]["message"] for m in seen if m.get("method") == "window/showMessage"]
    assert len(shown) == 1 and "pi.bash.timeoutSeconds" in shown[0], shown
    # replies to requests handled together may pass each other (LSP correlates them by id: the
    # read's reply is sent by its task, listTools' at once); initialize's comes first, shutdown's last
    order = [m["id"] for m in seen if "method" not in m]
    assert order[0] == 1 and order[-1] == 4 and sorted(order) == [1, 2, 3, 4], order


def test_answering_initialize_does_not_import_the_session(tmp_path: Path) -> None:
    # what the daemon imports before its first reply is written; the session loads after it
    probe = r"""
import sys
from pi_lsp.daemon.frame_writer import CoalescingWriter
write, write_now = CoalescingWriter.write, CoalescingWriter.write_now  # frames; responses
def report_loaded():
    loaded = sorted(m for m in sys.modules if m.split(".")[0] == "pydantic" or m.startswith((
        "pi_lsp.tools", "pi_lsp.agent.tool", "pi_lsp.daemon.tool_host", "pi_lsp.daemon.settings",
        "pi_lsp.policy", "pi_lsp.changes", "pi_lsp.llm.types", "pi_lsp.daemon.commands",
        "pi_lsp.daemon.code_actions", "pi_lsp.daemon.change_actions")))
    sys.stderr.write("LOADED " + " ".join(loaded) + "\n")
    CoalescingWriter.write, CoalescingWriter.write_now = write, write_now
def first_write(self, data):
    report_loaded()
    return write(self, data)
def first_write_now(self, data):
    report_loaded()
    return write_now(self, data)
CoalescingWriter.write, CoalescingWriter.write_now = first_write, first_write_now
from pi_lsp.cli import main
sys.exit(main([]))
"""
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
        "initializationOptions": {"pi": {"approvals": {"rules": [{"tool": "*", "action": "allow"}]}}}}}
    done = subprocess.run(
        [sys.executable, "-c", probe], input=_frame(message), capture_output=True, cwd=REPO, timeout=BOUND,
        env=server_env(TMPDIR=str(server_tmp(tmp_path))),
    )
    (line,) = [x for x in done.stderr.decode().splitlines() if x.startswith("LOADED")]
    assert line == "LOADED ", line
    assert b'"serverInfo"' in done.stdout  # the reply was written (then stdin closed: the session ended)


def test_start_up_runs_without_the_cyclic_collector_and_serving_runs_with_it(tmp_path: Path) -> None:
    # pi_lsp.long_lived: imports and the server are built with the collector off, then frozen; by
    # the first reply the collector must be back on (else cycles would pile up for the session)
    probe = r"""
import gc, sys
from pi_lsp.daemon.frame_writer import CoalescingWriter
write_now = CoalescingWriter.write_now
def first_write_now(self, data):
    sys.stderr.write(f"GC enabled={gc.isenabled()} frozen={gc.get_freeze_count()}\n")
    CoalescingWriter.write_now = write_now
    return write_now(self, data)
CoalescingWriter.write_now = first_write_now
from pi_lsp.cli import main
sys.exit(main([]))
"""
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}
    done = subprocess.run(
        [sys.executable, "-c", probe], input=_frame(message), capture_output=True, cwd=REPO, timeout=BOUND,
        env=server_env(TMPDIR=str(server_tmp(tmp_path))),
    )
    (line,) = [x for x in done.stderr.decode().splitlines() if x.startswith("GC ")]
    enabled, frozen = (part.split("=")[1] for part in line.split()[1:])
    assert enabled == "True", line
    # what lsprotocol, pygls and pi-lsp built (about 85,000 tracked objects); the probe's own
    # imports (asyncio) are about 16,000
    assert int(frozen) > 50_000, line
    assert b'"serverInfo"' in done.stdout
