"""Approvals through the daemon (issue 9): a real ``python -m pi_lsp`` over stdio, FakeEditor as
the editor answering ``window/showMessageRequest``, external ``pi/executeToolCall``\\ s and
``pi/prompt`` runs against the loopback replay server."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from pi_lsp.demo.fake_editor import FakeEditor
from pi_lsp.llm.recording import parse_recording
from pi_lsp.llm.replay import ReplayServer
from tests.e2e.daemon_support import server_env, server_tmp, wait_until

ACTIONS = ["Allow once", "Allow for this session", "Deny"]


def record_prompts(editor: FakeEditor, answer: Any = None) -> list[types.ShowMessageRequestParams]:
    """Replace the editor's prompt handler with one that records the whole request and answers
    ``answer`` (a title, ``None`` to dismiss, or an ``asyncio.Event`` to never answer until set)."""
    seen: list[types.ShowMessageRequestParams] = []

    async def handler(params: types.ShowMessageRequestParams) -> Any:
        seen.append(params)
        if isinstance(answer, asyncio.Event):
            await answer.wait()
            return None
        return next((a for a in params.actions or [] if a.title == answer), None)

    editor.client.protocol.fm.features[types.WINDOW_SHOW_MESSAGE_REQUEST] = handler
    return seen


async def test_bash_asks_with_the_exact_command_and_the_three_actions(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor()
    prompts = record_prompts(editor, "Allow once")
    result = await editor.call("bash", {"command": "touch made.txt"})
    assert result["isError"] is False and (tmp_path / "made.txt").exists()
    assert len(prompts) == 1
    assert [a.title for a in prompts[0].actions] == ACTIONS
    assert prompts[0].type == types.MessageType.Warning
    assert "bash" in prompts[0].message and "`touch made.txt`" in prompts[0].message
    assert "not a simple read-only command" in prompts[0].message
    assert await wait_until(lambda: any(e["event"]["type"] == "approval_requested" for e in editor.events))
    event = next(e for e in editor.events if e["event"]["type"] == "approval_requested")
    assert event["sessionId"] == "external" and event["event"]["scope"] == "touch made.txt"


async def test_a_read_only_command_runs_without_asking(make_editor, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    editor: FakeEditor = await make_editor()
    prompts = record_prompts(editor, "Deny")
    result = await editor.call("bash", {"command": "cat a.txt"})
    assert editor.result_text(result) == "hello\n" and prompts == []


@pytest.mark.parametrize(
    ("answer", "runs", "says"),
    [("Allow once", True, None), ("Deny", False, "the user declined"), (None, False, "dismissed the prompt")],
)
async def test_each_answer_gives_its_outcome(make_editor, tmp_path: Path, answer: str | None, runs: bool, says: str | None) -> None:
    editor: FakeEditor = await make_editor(message_answer=answer)
    result = await editor.call("bash", {"command": "echo x > out.txt"})
    assert (tmp_path / "out.txt").exists() is runs
    assert result["isError"] is not runs
    if says is not None:
        text = editor.result_text(result)
        assert text.startswith("The user declined this tool call (bash `echo x > out.txt`)") and says in text
    assert len(editor.message_requests) == 1


async def test_allow_for_this_session_is_not_asked_again_until_a_new_session(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(message_answer="Allow for this session")
    for _ in range(3):
        result = await editor.call("bash", {"command": "echo x >> log.txt"})
        assert result["isError"] is False
    assert len(editor.message_requests) == 1
    await editor.call("bash", {"command": "echo y >> log.txt"})  # another command: asked
    assert len(editor.message_requests) == 2
    assert (tmp_path / "log.txt").read_text() == "x\nx\nx\ny\n"
    await editor.stop()
    again: FakeEditor = await make_editor(message_answer="Deny")  # a new daemon session
    result = await again.call("bash", {"command": "echo x >> log.txt"})
    assert result["isError"] is True and len(again.message_requests) == 1


async def test_a_client_without_the_request_gets_the_fallback(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(message_answer="Allow once")
    del editor.client.protocol.fm.features[types.WINDOW_SHOW_MESSAGE_REQUEST]  # answers MethodNotFound
    result = await editor.call("bash", {"command": "touch made.txt"})
    text = editor.result_text(result)
    assert result["isError"] is True and not (tmp_path / "made.txt").exists()
    assert "needs the user's approval and was not run: the editor cannot ask" in text
    assert "the fallback is deny" in text


async def test_the_fallback_can_be_allow(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(initialization_options={"pi": {"approvals": {"fallback": "allow"}}})
    del editor.client.protocol.fm.features[types.WINDOW_SHOW_MESSAGE_REQUEST]
    result = await editor.call("bash", {"command": "touch made.txt"})
    assert result["isError"] is False and (tmp_path / "made.txt").exists()


async def test_no_answer_within_the_timeout_is_the_fallback_and_a_late_answer_changes_nothing(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(initialization_options={"pi": {"approvals": {"timeoutSeconds": 0.3}}})
    release = asyncio.Event()
    prompts = record_prompts(editor, release)
    result = await asyncio.wait_for(editor.call("bash", {"command": "touch made.txt"}), 15)
    assert "no answer within 0.3 s; the fallback is deny" in editor.result_text(result)
    release.set()  # the editor answers (dismissed) after the daemon stopped waiting
    listing = await editor.request("pi/listTools", {})
    assert listing["tools"] and len(prompts) == 1 and not (tmp_path / "made.txt").exists()


async def test_a_call_cancelled_while_asking_is_aborted(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor()
    release = asyncio.Event()
    prompts = record_prompts(editor, release)
    future = editor.client.protocol.send_request(
        "pi/executeToolCall", {"toolCall": {"id": "c", "name": "bash", "arguments": {"command": "touch made.txt"}}},
        msg_id="cancel-me",
    )
    assert await wait_until(lambda: prompts)
    editor.cancel("cancel-me")
    result = await asyncio.wait_for(asyncio.wrap_future(future), 15)
    assert result["isError"] is True and editor.result_text(result) == "Operation aborted"
    release.set()
    assert not (tmp_path / "made.txt").exists()


async def test_edit_and_write_of_protected_paths_are_refused_without_asking(make_editor, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    editor: FakeEditor = await make_editor(
        message_answer="Allow once",
        initialization_options={"pi": {"approvals": {"rules": [{"tool": "*", "action": "allow"}]}}},
    )
    write = await editor.call("write", {"path": ".env", "content": "KEY=1\n"})
    edit = await editor.call("edit", {"path": "sub/../.git/config", "edits": [{"oldText": "core", "newText": "x"}]})
    for result in (write, edit):
        assert result["isError"] is True and "is a protected path" in editor.result_text(result)
    assert not (tmp_path / ".env").exists()
    assert (tmp_path / ".git" / "config").read_text() == "[core]\n"
    assert editor.message_requests == [] and editor.apply_edits == []


async def test_writes_outside_the_workspace_ask(make_editor, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    editor: FakeEditor = await make_editor(root=ws, message_answer="Deny")
    outside = tmp_path / "elsewhere.txt"
    result = await editor.call("write", {"path": str(outside), "content": "x"})
    assert result["isError"] is True and not outside.exists()
    assert "is outside the workspace" in editor.message_requests[0]


async def test_malformed_rules_are_shown_and_the_defaults_apply(make_editor, tmp_path: Path) -> None:
    rules = [{"tool": "bash", "command": "(", "action": "allow"}, {"tool": "teleport", "action": "allow"}]
    editor: FakeEditor = await make_editor(
        message_answer="Deny", initialization_options={"pi": {"approvals": {"rules": rules}}}
    )
    assert await wait_until(lambda: any("using the default rules" in m for m in editor.shown_messages))
    shown = "\n".join(editor.shown_messages)
    assert "not a valid regular expression" in shown and "no tool is named 'teleport'" in shown
    result = await editor.call("bash", {"command": "touch made.txt"})
    assert result["isError"] is True and len(editor.message_requests) == 1


@pytest.fixture
async def prompt_editor(tmp_path: Path):
    """``await prompt_editor(turns)``: a FakeEditor answering ``Allow for this session`` whose
    daemon talks to a replay server serving ``turns``; journals go to ``tmp_path/journals``."""
    made: list[tuple[FakeEditor, ReplayServer]] = []

    async def make(turns: list[dict[str, Any]]) -> FakeEditor:
        replay = ReplayServer(parse_recording("\n".join(json.dumps(t) for t in turns)), log=io.StringIO())
        url = replay.start()
        env = server_env(TMPDIR=str(server_tmp(tmp_path)), PI_LSP_SESSIONS_DIR=str(tmp_path / "journals"))
        pi = {"baseUrl": url, "model": "replay", "maxRetries": 0}
        editor = FakeEditor(tmp_path / "ws", initialization_options={"pi": pi}, env=env,
                            message_answer="Allow for this session")
        made.append((editor, replay))
        await editor.start()
        return editor

    (tmp_path / "ws").mkdir()
    yield make
    for editor, replay in made:
        await editor.stop()
        replay.stop()


def _bash_turn(call_id: str) -> dict[str, Any]:
    return {"reply": {"toolCalls": [{"id": call_id, "name": "bash", "arguments": {"command": "echo run >> log.txt"}}]}}


async def test_agent_sessions_keep_their_own_grants_and_journal_every_decision(prompt_editor, tmp_path: Path) -> None:
    read_turn = {"reply": {"toolCalls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.txt"}}]}}
    turns = [_bash_turn("a1"), _bash_turn("a2"), read_turn, {"reply": {"text": "done"}}, _bash_turn("b1"), {"reply": {"text": "done"}}]
    (tmp_path / "ws" / "notes.txt").write_text("notes\n")
    editor = await prompt_editor(turns)
    first = await asyncio.wait_for(editor.request("pi/prompt", {"text": "go"}), 30)
    assert first["stopReason"] == "stop"
    assert len(editor.message_requests) == 1  # a2 ran under the session grant
    second = await asyncio.wait_for(editor.request("pi/prompt", {"text": "again"}), 30)
    assert second["sessionId"] != first["sessionId"]
    assert len(editor.message_requests) == 2  # a new session asks again
    assert (tmp_path / "ws" / "log.txt").read_text() == "run\nrun\nrun\n"
    lines = [json.loads(line) for line in (tmp_path / "journals" / f"{first['sessionId']}.jsonl").read_text().splitlines()]
    approvals = [line for line in lines if line["type"] == "approval"]
    assert [(a["toolCallId"], a["decision"], a["by"]) for a in approvals] == [
        ("a1", "allow", "user"), ("a2", "allow", "grant"), ("r1", "allow", "default"),  # a routine allow too
    ]
    assert approvals[0]["answer"] == "Allow for this session" and approvals[0]["grant"] == "session"
    assert approvals[0]["scope"] == "echo run >> log.txt"
