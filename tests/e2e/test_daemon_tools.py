"""Tool calls over the wire: results, batches, tool listing, cancellation, pi/event."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from pi_lsp.demo.fake_editor import FakeEditor
from tests.e2e.daemon_support import wait_until

ALLOW = "Allow once"  # the approval answer for bash commands that are not read-only (issue 9)


async def test_read_ls_and_bash_run_through_the_daemon(make_editor, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("first\nsecond\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    editor: FakeEditor = await make_editor(message_answer=ALLOW)
    await editor.request("pi/setActiveTools", {"names": ["read", "bash", "ls"]})
    read = await editor.call("read", {"path": "notes.txt"}, call_id="r")
    assert read["toolCallId"] == "r" and read["toolName"] == "read" and read["isError"] is False
    assert editor.result_text(read) == "first\nsecond\n"
    listing = await editor.call("ls", {"path": "."}, call_id="l")
    assert editor.result_text(listing).splitlines() == ["notes.txt", "sub/"]
    bash = await editor.call("bash", {"command": "echo out; exit 3"}, call_id="b")
    assert bash["isError"] is True
    assert "out" in editor.result_text(bash) and "exited with code 3" in editor.result_text(bash)


async def test_an_open_buffer_is_what_read_returns(make_editor, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("disk\n", encoding="utf-8")
    editor: FakeEditor = await make_editor()
    editor.open("a.txt", text="typed but unsaved\n")
    result = await editor.call("read", {"path": "a.txt"})
    text = editor.result_text(result)
    assert text.startswith("typed but unsaved\n")
    assert "[Unsaved changes in the editor" in text


async def test_a_read_through_a_symlink_finds_the_open_buffer_and_follows_a_re_pointed_link(make_editor, tmp_path: Path) -> None:
    # the policy resolves the link and hands its real path to the read (issue 21): the open
    # document is found by it, and a link re-pointed between two reads is resolved anew
    (tmp_path / "a.txt").write_text("disk a\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("disk b\n", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to("a.txt")
    editor: FakeEditor = await make_editor()
    editor.open("a.txt", text="typed in a\n")
    assert editor.result_text(await editor.call("read", {"path": "link.txt"})).startswith("typed in a\n\n\n[Unsaved changes")
    (tmp_path / "link.txt").unlink()
    (tmp_path / "link.txt").symlink_to("b.txt")
    assert editor.result_text(await editor.call("read", {"path": "link.txt"})) == "disk b\n"


async def test_unknown_tool_and_bad_arguments_are_error_results(make_editor) -> None:
    editor: FakeEditor = await make_editor()
    missing = await editor.call("teleport", {})
    assert missing["isError"] is True and editor.result_text(missing) == "Tool teleport not found"
    invalid = await editor.call("read", {"offset": 1})
    assert invalid["isError"] is True
    assert editor.result_text(invalid).startswith('Validation failed for tool "read":')


async def test_batch_results_come_back_in_source_order(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(message_answer=ALLOW)
    reply = await editor.request(
        "pi/executeToolCalls",
        {"toolCalls": [
            {"id": "slow", "name": "bash", "arguments": {"command": "sleep 0.5; echo slow"}},
            {"id": "fast", "name": "bash", "arguments": {"command": "echo fast"}},
        ]},
    )
    assert [r["toolCallId"] for r in reply["results"]] == ["slow", "fast"]
    ends = [e["event"]["toolCallId"] for e in editor.events if e["event"]["type"] == "tool_execution_end"]
    assert ends == ["fast", "slow"]  # completion order
    truncated = await editor.request(
        "pi/executeToolCalls",
        {"toolCalls": [{"id": "x", "name": "bash", "arguments": {"command": "touch ran"}}], "stopReason": "length"},
    )
    assert truncated["results"][0]["isError"] is True
    assert not (tmp_path / "ran").exists()


async def test_list_and_set_active_tools(make_editor) -> None:
    editor: FakeEditor = await make_editor()
    listing = await editor.request("pi/listTools", {})
    names = [t["name"] for t in listing["tools"]]
    assert names == [
        "read", "bash", "edit", "write", "grep", "find", "ls",
        # issue 17: registered, inactive when the editor does not offer its language servers
        "diagnostics", "definition", "references", "rename", "symbols", "hover",
    ]
    assert [t["name"] for t in listing["tools"] if t["active"]] == ["read", "bash", "edit", "write"]
    read = listing["tools"][0]
    assert set(read) == {"name", "label", "description", "parameters", "active"}
    assert read["parameters"]["required"] == ["path"]
    assert await editor.request("pi/setActiveTools", {"names": ["grep", "read"]}) == {"active": ["grep", "read"]}
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await editor.request("pi/setActiveTools", {"names": ["read", "teleport"]})
    assert "teleport" in caught.value.message
    listing = await editor.request("pi/listTools", None)
    assert [t["name"] for t in listing["tools"] if t["active"]] == ["read", "grep"]  # unchanged
    inactive = await editor.call("write", {"path": "x.txt", "content": "x"})
    assert editor.result_text(inactive) == "Tool write not found (write is not active: add it to the pi.activeTools setting)"


async def test_cancel_request_answers_with_the_aborted_result(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(message_answer=ALLOW)
    marker = tmp_path / "started"
    future = editor.client.protocol.send_request(
        "pi/executeToolCall",
        {"toolCall": {"id": "c", "name": "bash", "arguments": {"command": f"echo partial; touch {marker}; sleep 60"}}},
        msg_id="cancel-me",
    )
    assert await wait_until(marker.exists)
    editor.cancel("cancel-me")
    result = await asyncio.wait_for(asyncio.wrap_future(future), 30)
    assert result["toolCallId"] == "c" and result["isError"] is True
    text = editor.result_text(result)
    assert "partial" in text and "Command aborted" in text
    slow_read = await editor.call("read", {"path": "started"})
    assert slow_read["isError"] is False  # the daemon keeps serving


async def test_external_calls_emit_bounded_tool_events(make_editor, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(1500)), encoding="utf-8")
    editor: FakeEditor = await make_editor()
    result = await editor.call("read", {"path": "big.txt"}, call_id="big")
    assert len(editor.result_text(result)) > 10_000  # the reply carries the whole result
    await wait_until(lambda: any(e["event"]["type"] == "tool_execution_end" for e in editor.events))
    kinds = [e["event"]["type"] for e in editor.events]
    assert kinds == ["tool_execution_start", "tool_execution_end"]
    assert all(e["sessionId"] == "external" for e in editor.events)
    end = editor.events[-1]["event"]
    assert end["toolCallId"] == "big" and end["isError"] is False
    text = end["result"]["content"][0]["text"]
    assert len(text) < 8_300 and text.endswith("more characters]")  # no whole-file payload


async def test_tool_events_of_own_calls_only_for_a_client_that_asks(make_editor, tmp_path: Path) -> None:
    """Issue 21: without ``experimental.pi.toolEvents`` a client's own calls send no tool events
    (the result is the same, the policy still asks and its approval events still go out)."""
    from pi_lsp.demo.fake_editor import ALL_PI_FEATURES

    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    quiet_features = {k: v for k, v in ALL_PI_FEATURES.items() if k != "toolEvents"}
    editor: FakeEditor = await make_editor(message_answer=ALLOW, experimental_pi=quiet_features)
    read = await editor.call("read", {"path": "a.txt"}, call_id="r")
    assert editor.result_text(read) == "hello\n" and read["isError"] is False
    batch = await editor.request("pi/executeToolCalls", {"toolCalls": [
        {"id": "b", "name": "bash", "arguments": {"command": "echo hi > b.txt; echo done"}},
    ]})
    assert editor.result_text(batch["results"][0]).strip() == "done"
    assert editor.message_requests, "the policy asked before the bash call"
    # events precede the reply on the stream, so every event sent has arrived by now
    kinds = [e["event"]["type"] for e in editor.events]
    assert not [k for k in kinds if k.startswith("tool_execution")]
    assert "approval_requested" in kinds and "approval_resolved" in kinds


async def test_bash_updates_are_coalesced_new_text(make_editor) -> None:
    editor: FakeEditor = await make_editor(message_answer=ALLOW)
    command = "for i in $(seq 1 40); do echo tick$i; sleep 0.02; done"
    await editor.call("bash", {"command": command}, call_id="t")
    updates = [e["event"] for e in editor.events if e["event"]["type"] == "tool_execution_update"]
    assert updates, "bash streamed no update"
    assert all(set(u) == {"type", "toolCallId", "toolName", "output"} for u in updates)
    assert len(updates) < 40  # coalesced (at most 4 per second)
    streamed = "".join(u["output"] for u in updates)
    assert "tick1\n" in streamed and streamed.count("tick1\n") == 1  # new text only, never repeated
