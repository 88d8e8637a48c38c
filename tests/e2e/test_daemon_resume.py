"""Resume after a daemon restart, and pi/sessions: the daemon over stdio (FakeEditor), killed
with SIGKILL in the middle of a tool call, started again, and the session continued (its approval
grants not restored)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
from pathlib import Path
from typing import Any

from pi_lsp.demo.fake_editor import FakeEditor
from pi_lsp.llm.recording import parse_recording
from pi_lsp.llm.replay import ReplayServer
from pi_lsp.daemon.session_journal import INTERRUPTED_TEXT
from tests.e2e.daemon_support import server_env, server_tmp, wait_until


class CapturingReplay(ReplayServer):
    """The replay server, also keeping every request body."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bodies: list[Any] = []

    def _take(self, body: Any):  # type: ignore[override]
        self.bodies.append(body)
        return super()._take(body)


def _editor(tmp_path: Path, url: str) -> FakeEditor:
    """A daemon whose user answers every approval prompt "Allow for this session"."""
    env = server_env(TMPDIR=str(server_tmp(tmp_path)), PI_LSP_SESSIONS_DIR=str(tmp_path / "journals"))
    pi = {"baseUrl": url, "model": "replay", "maxRetries": 0}
    return FakeEditor(tmp_path / "ws", initialization_options={"pi": pi}, env=env, message_answer="Allow for this session")


GRANTED = {"id": "g1", "name": "bash", "arguments": {"command": "touch granted.txt"}}


async def test_a_session_survives_a_daemon_killed_mid_tool_call(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    marker = tmp_path / "ws" / "started.pid"
    first = CapturingReplay(parse_recording("\n".join(json.dumps(t) for t in [
        {"reply": {"text": "Checking.", "toolCalls": [GRANTED]}},
        {"reply": {"text": "Running the slow job.", "toolCalls": [{"id": "slow_1", "name": "bash", "arguments": {
            "command": "echo $$ > started.pid.tmp && mv started.pid.tmp started.pid && exec sleep 30"}}]}},
    ])), log=io.StringIO())
    editor = _editor(tmp_path, first.start())
    try:
        await editor.start()
        prompt = asyncio.ensure_future(editor.request("pi/prompt", {"text": "Run   the slow\njob please"}))
        assert await wait_until(marker.exists, timeout=30), "the bash call started"
        session_id = next(p["sessionId"] for p in editor.events)
        assert len(editor.message_requests) == 2  # touch (now granted for the session), the slow job
        assert editor.process is not None
        editor.process.kill()  # no shutdown, no journal flush beyond what was already written
        await editor.process.wait()
        prompt.cancel()
    finally:
        await editor.stop()
        first.stop()
        if marker.exists():  # the orphaned sleep of the killed daemon's bash call
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(marker.read_text()), signal.SIGKILL)
    journal = tmp_path / "journals" / f"{session_id}.jsonl"
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    kinds = [line["type"] for line in lines]
    assert kinds.count("message") == 4 and "run_end" not in kinds  # killed: no result, no end

    second = CapturingReplay(parse_recording("\n".join(json.dumps(t) for t in [
        {"reply": {"text": "Checking again.", "toolCalls": [{**GRANTED, "id": "g2"}]}},
        {"reply": {"text": "The job was interrupted; resuming."}},
    ])), log=io.StringIO())
    editor = _editor(tmp_path, second.start())
    try:
        await editor.start()
        listing = await editor.request("pi/sessions", {})
        [entry] = listing["sessions"]
        assert entry["id"] == session_id and entry["firstPrompt"] == "Run the slow job please"
        assert (entry["turns"], entry["prompts"]) == (2, 1)
        assert isinstance(entry["timestamp"], int) and entry["updated"] >= entry["timestamp"]
        reply = await asyncio.wait_for(
            editor.request("pi/prompt", {"sessionId": session_id, "text": "what happened?"}), 30)
        assert reply == {"sessionId": session_id, "stopReason": "stop"}
        # the grant of the killed daemon was not restored: the same command is asked about again
        assert len(editor.message_requests) == 1 and "touch granted.txt" in editor.message_requests[0]
    finally:
        await editor.stop()
        second.stop()
    # the model saw the whole conversation, the interrupted call closed with an error result
    messages = second.bodies[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant", "tool", "user"]
    assert messages[4]["tool_calls"][0]["id"] == "slow_1"
    assert messages[5] == {"role": "tool", "tool_call_id": "slow_1", "content": INTERRUPTED_TEXT}
    assert messages[6]["content"] == "what happened?"
    # the journal keeps the closing result and the continued run
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    roles = [(line["message"]["role"], line["message"].get("isError")) for line in lines if line["type"] == "message"]
    assert roles == [("user", None), ("assistant", None), ("toolResult", False), ("assistant", None), ("toolResult", True),
                     ("user", None), ("assistant", None), ("toolResult", False), ("assistant", None)]
    assert lines[-1]["type"] == "run_end" and lines[-1]["stopReason"] == "stop"


async def test_sessions_lists_only_this_workspace(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    journals = tmp_path / "journals"
    journals.mkdir()
    (journals / "elsewhere.jsonl").write_text(json.dumps(
        {"type": "session", "version": 1, "id": "elsewhere", "cwd": "/somewhere/else", "timestamp": 1}) + "\n")
    (journals / "broken.jsonl").write_text("not json\n")
    replay = ReplayServer(parse_recording(json.dumps({"reply": {"text": "ok"}})), log=io.StringIO())
    editor = _editor(tmp_path, replay.start())
    try:
        await editor.start()
        assert await editor.request("pi/sessions", None) == {"sessions": []}
        reply = await editor.request("pi/prompt", {"text": "hi"})
        listing = await editor.request("pi/sessions", {})
    finally:
        await editor.stop()
        replay.stop()
    assert [s["id"] for s in listing["sessions"]] == [reply["sessionId"]]
    assert listing["sessions"][0]["firstPrompt"] == "hi" and listing["sessions"][0]["turns"] == 1
