"""pi/prompt end to end: the daemon over stdio, FakeEditor as the client, the replay server as the
model (a real loopback HTTP server streaming recorded turns)."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from pi_lsp.demo.fake_editor import FakeEditor
from pi_lsp.llm.recording import parse_recording
from pi_lsp.llm.replay import ReplayServer
from tests.e2e.daemon_support import server_env, server_tmp, wait_until


class CapturingReplay(ReplayServer):
    """The replay server, also keeping every request body (to look at the system prompt)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bodies: list[Any] = []

    def _take(self, body: Any):  # type: ignore[override]
        self.bodies.append(body)
        return super()._take(body)


def _recording(*turns: dict[str, Any]) -> list:
    return parse_recording("\n".join(json.dumps(t) for t in turns))


@pytest.fixture
async def start(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``await start(turns, root=..., **pi settings)``: (editor, replay), both stopped at teardown."""
    editors: list[FakeEditor] = []
    replays: list[ReplayServer] = []

    async def make(turns: list, root: Path | None = None, **settings: Any) -> tuple[FakeEditor, ReplayServer]:
        replay = CapturingReplay(turns, log=io.StringIO())
        replays.append(replay)
        url = replay.start()
        pi = {"baseUrl": url, "model": "replay", "maxRetries": 0, **settings}
        env = server_env(TMPDIR=str(server_tmp(tmp_path)), PI_LSP_SESSIONS_DIR=str(tmp_path / "journals"))
        editor = FakeEditor(
            root or tmp_path / "ws", initialization_options={"pi": pi}, env=env, message_answer="Allow once"
        )
        editors.append(editor)
        await editor.start()
        return editor, replay

    (tmp_path / "ws").mkdir()
    yield make
    for editor in editors:
        await editor.stop()
    for replay in replays:
        replay.stop()


def _events(editor: FakeEditor, session_id: str) -> list[dict[str, Any]]:
    return [p["event"] for p in editor.events if p["sessionId"] == session_id]


async def test_prompt_edits_through_apply_edit_with_pis_event_sequence(start, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "greet.py").write_text('def greet():\n    return "hi"\n', encoding="utf-8")
    (ws / "AGENTS.md").write_text("Always answer in haiku.\n", encoding="utf-8")
    turns = _recording(
        {"reply": {"text": "Fixing it.", "toolCalls": [
            {"id": "e1", "name": "edit", "arguments": {"path": "greet.py", "edits": [{"oldText": '"hi"', "newText": '"héllo 👋"'}]}},
            {"id": "r1", "name": "read", "arguments": {"path": "missing.txt"}},
        ]}},
        {"reply": {"text": "Done."}, "expect": {"toolResultIds": ["e1", "r1"], "toolResultContains": ["Successfully replaced 1 block(s)"]}},
    )
    editor, replay = await start(turns)
    editor.open("greet.py")
    reply = await asyncio.wait_for(editor.request("pi/prompt", {"text": "greet with an emoji"}), 30)
    assert reply["stopReason"] == "stop" and "errorMessage" not in reply
    session_id = reply["sessionId"]
    assert replay.divergences == []
    # the edit went through the editor, versioned, and was saved by the editor
    assert len(editor.apply_edits) == 1
    assert editor.apply_edits[0]["label"] == "pi: edit greet.py"
    assert editor.apply_edits[0]["edit"]["documentChanges"][0]["textDocument"]["version"] == 1
    assert editor.text("greet.py") == 'def greet():\n    return "héllo 👋"\n'
    assert (ws / "greet.py").read_text(encoding="utf-8") == editor.text("greet.py")
    assert len(editor.save_requests) == 1
    # Pi's event sequence, results in source order
    assert await wait_until(lambda: any(e["type"] == "agent_end" for e in _events(editor, session_id)))
    kinds = [e["type"] for e in _events(editor, session_id) if e["type"] not in ("message_update", "tool_execution_update")]
    assert kinds == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end",
        "tool_execution_start", "tool_execution_start", "tool_execution_end", "tool_execution_end",
        "message_start", "message_end", "message_start", "message_end", "turn_end",
        "turn_start", "message_start", "message_end", "turn_end", "agent_end",
    ]
    events = _events(editor, session_id)
    turn_end = next(e for e in events if e["type"] == "turn_end")
    assert [r["toolCallId"] for r in turn_end["toolResults"]] == ["e1", "r1"]
    assert turn_end["toolResults"][1]["isError"] is True
    updates = [e for e in events if e["type"] == "message_update"]
    assert updates and all(set(e) == {"type", "delta"} for e in updates)
    assert "".join(e["delta"].get("text", "") for e in updates) == "Fixing it.Done."
    # the system prompt lists the active tools and carries AGENTS.md
    system = replay.bodies[0]["messages"][0]
    assert system["role"] == "system" and "Always answer in haiku." in system["content"]
    assert "Available tools:\n- read:" in system["content"]
    # journaled
    journal = (tmp_path / "journals" / f"{session_id}.jsonl").read_text(encoding="utf-8").splitlines()
    lines = [json.loads(line) for line in journal]
    assert lines[0]["type"] == "session" and lines[-1] == {**lines[-1], "type": "run_end", "stopReason": "stop"}
    roles = [line["message"]["role"] for line in lines if line["type"] == "message"]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "assistant"]


async def test_a_dirty_buffer_is_edited_but_not_saved(start, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "notes.md").write_text("# Notes\n", encoding="utf-8")
    turns = _recording(
        {"reply": {"toolCalls": [{"id": "e", "name": "edit", "arguments": {"path": "notes.md", "edits": [{"oldText": "# Notes\n", "newText": "# Notes\n\n- agent\n"}]}}]}},
        {"reply": {"text": "ok"}},
    )
    editor, _ = await start(turns)
    editor.open("notes.md")
    editor.type("notes.md", 8, 8, "- user typing\n")
    reply = await asyncio.wait_for(editor.request("pi/prompt", {"text": "add a note"}), 30)
    assert reply["stopReason"] == "stop"
    assert editor.text("notes.md") == "# Notes\n\n- agent\n- user typing\n"
    assert (ws / "notes.md").read_text(encoding="utf-8") == "# Notes\n"
    assert editor.save_requests == []


async def test_abort_from_the_client_stops_the_running_tool(start) -> None:
    turns = _recording(
        {"reply": {"toolCalls": [{"id": "b", "name": "bash", "arguments": {"command": "echo started; sleep 30"}}]}},
        {"reply": {"text": "never served"}},
    )
    editor, replay = await start(turns)
    prompt = asyncio.ensure_future(editor.request("pi/prompt", {"text": "run it"}))
    # the command is running once its first output arrives as a tool update
    assert await wait_until(lambda: any(p["event"]["type"] == "tool_execution_update" for p in editor.events))
    session_id = editor.events[0]["sessionId"]
    # a second prompt while this one runs is a RequestFailed error
    with pytest.raises(JsonRpcException) as busy:
        await editor.request("pi/prompt", {"text": "another"})
    assert busy.value.code == -32803 and "already processing" in busy.value.message
    editor.notify("pi/abort", {"sessionId": session_id})
    reply = await asyncio.wait_for(prompt, 15)
    assert reply == {"sessionId": session_id, "stopReason": "aborted", "errorMessage": reply.get("errorMessage")}
    end = next(p["event"] for p in editor.events if p["event"]["type"] == "tool_execution_end")
    assert end["isError"] is True and "Command aborted" in end["result"]["content"][0]["text"]
    assert replay.served == 1  # the aborted run made no further request
    # the session continues: the orphan-free transcript goes out with the next prompt
    replay.turns.append(_recording({"reply": {"text": "back"}})[0])
    replay.served = 1
    again = await asyncio.wait_for(editor.request("pi/prompt", {"text": "continue", "sessionId": session_id}), 15)
    assert again["stopReason"] == "stop" and again["sessionId"] == session_id
    roles = [m["role"] for m in replay.bodies[-1]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"]  # the aborted reply dropped


async def test_cancel_request_on_a_prompt_aborts_it(start) -> None:
    turns = _recording({"reply": {"toolCalls": [{"id": "b", "name": "bash", "arguments": {"command": "sleep 30"}}]}})
    editor, _ = await start(turns)
    future = editor.client.protocol.send_request("pi/prompt", {"text": "go"}, msg_id="prompt-1")
    assert await wait_until(lambda: any(p["event"]["type"] == "tool_execution_start" for p in editor.events))
    from lsprotocol import types

    editor.notify("$/cancelRequest", types.CancelParams(id="prompt-1"))
    reply = await asyncio.wait_for(asyncio.wrap_future(future), 15)
    assert reply["stopReason"] == "aborted"


async def test_an_endpoint_that_is_down_ends_the_run_with_a_clear_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (tmp_path / "ws").mkdir()
    env = server_env(TMPDIR=str(server_tmp(tmp_path)), PI_LSP_SESSIONS_DIR=str(tmp_path / "j"))
    pi = {"baseUrl": f"http://127.0.0.1:{port}/v1", "model": "m", "maxRetries": 0, "connectTimeoutSeconds": 2}
    async with FakeEditor(tmp_path / "ws", initialization_options={"pi": pi}, env=env) as editor:
        reply = await asyncio.wait_for(editor.request("pi/prompt", {"text": "hello"}), 30)
        assert reply["stopReason"] == "error" and "Connection error" in reply["errorMessage"]
        with pytest.raises(JsonRpcException) as bad:
            await editor.request("pi/prompt", {"text": ""})
        assert bad.value.code == -32602


@pytest.mark.parametrize(
    ("pi", "missing"),
    [({}, "pi.baseUrl and pi.model are not set"), ({"baseUrl": "http://127.0.0.1:9/v1"}, "pi.model is not set"),
     ({"model": "m"}, "pi.baseUrl is not set"),
     ({"model": 5, "baseUrl": "http://127.0.0.1:9/v1"}, "pi.model is invalid: Input should be a valid string (got 5)")],
)
async def test_a_prompt_without_a_configured_model_ends_at_once_saying_what_to_set(
    tmp_path: Path, pi: dict[str, Any], missing: str
) -> None:
    (tmp_path / "ws").mkdir()
    env = server_env(TMPDIR=str(server_tmp(tmp_path)), PI_LSP_SESSIONS_DIR=str(tmp_path / "j"))
    async with FakeEditor(tmp_path / "ws", initialization_options={"pi": pi}, env=env) as editor:
        reply = await asyncio.wait_for(editor.request("pi/prompt", {"text": "hello"}), 30)
        assert reply["stopReason"] == "error" and missing in reply["errorMessage"]
        assert "Set pi.baseUrl" in reply["errorMessage"]
