"""``pi/requestApproval`` and ``pi/approvalWithdrawn`` through the real daemon (issue 15,
APPROVALS_SPEC): a ``python -m pi_lsp`` over stdio, FakeEditor advertising
``capabilities.experimental.pi.approvals`` and answering (or not) the request."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.demo.fake_editor import ALL_PI_FEATURES, FakeEditor
from tests.e2e.daemon_support import wait_until

CAPABLE = {**ALL_PI_FEATURES, "approvals": True}


def answer_with(editor: FakeEditor, reply: Any) -> list[dict[str, Any]]:
    """Replace the editor's ``pi/requestApproval`` handler: record the params and answer ``reply``
    (a result value; an ``asyncio.Event`` = answer ``allowOnce`` only once it is set; an
    ``Exception`` = an error reply)."""
    seen: list[dict[str, Any]] = []

    async def handler(params: Any) -> Any:
        seen.append(params)
        if isinstance(reply, asyncio.Event):
            await reply.wait()
            return {"action": "allowOnce"}
        if isinstance(reply, Exception):
            raise reply
        return reply

    editor.client.protocol.fm.features["pi/requestApproval"] = handler
    return seen


def approval_events(editor: FakeEditor) -> list[dict[str, Any]]:
    return [e["event"] for e in editor.events if e["event"]["type"].startswith("approval_")]


async def test_a_capable_client_gets_the_request_with_every_field(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(experimental_pi=CAPABLE, message_answer="Allow once")
    result = await editor.call("bash", {"command": "touch made.txt"}, call_id="c1")
    assert result["isError"] is False and (tmp_path / "made.txt").exists()
    assert editor.message_requests == []
    [params] = editor.approval_requests
    assert params["title"] == "Run bash: touch made.txt"
    assert params["actions"] == [
        {"id": "allowOnce", "title": "Allow once"},
        {"id": "allowSession", "title": "Allow for this session"},
        {"id": "deny", "title": "Deny"},
    ]
    assert params["defaultAction"] is None  # not a read-only scope: nothing preselected
    assert params["timeoutMs"] == 120000
    assert (params["sessionId"], params["toolCallId"], params["toolName"]) == ("external", "c1", "bash")
    assert "`touch made.txt`" in params["message"] and "not a simple read-only command" in params["message"]
    assert await wait_until(lambda: len(approval_events(editor)) == 2)
    requested, resolved = approval_events(editor)
    assert requested["type"] == "approval_requested" and requested["approvalId"] == params["approvalId"]
    assert (requested["toolCallId"], requested["toolName"], requested["title"]) == ("c1", "bash", params["title"])
    assert resolved == {**resolved, "type": "approval_resolved", "approvalId": params["approvalId"],
                        "decision": "allow", "scope": "once", "by": "user", "toolCallId": "c1"}
    assert editor.withdrawals == []


async def test_only_a_read_only_scope_has_a_default_action(make_editor, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "notes.txt").write_text("n\n", encoding="utf-8")
    (ws / ".env").write_text("KEY=1\n", encoding="utf-8")
    editor: FakeEditor = await make_editor(root=ws, experimental_pi=CAPABLE, message_answer="Deny")
    await editor.call("read", {"path": str(tmp_path / "notes.txt")})
    await editor.call("read", {"path": ".env"})  # protected: its content would go to the model
    await editor.call("write", {"path": str(tmp_path / "out.txt"), "content": "x"})
    defaults = [(p["toolName"], p["defaultAction"]) for p in editor.approval_requests]
    assert defaults == [("read", "allowOnce"), ("read", None), ("write", None)]
    assert editor.approval_requests[0]["title"] == f"Use read: {tmp_path / 'notes.txt'}"


@pytest.mark.parametrize(
    ("reply", "runs", "says"),
    [
        ({"action": "allowSession"}, True, None),
        ({"action": "deny", "reason": "not now"}, False, "the user declined"),
        (None, False, "dismissed the prompt"),
        ({"action": "yes please"}, False, "dismissed the prompt"),
        (RuntimeError("the prompt broke"), False, "dismissed the prompt"),
    ],
)
async def test_each_reply_gives_its_outcome(make_editor, tmp_path: Path, reply: Any, runs: bool, says: str | None) -> None:
    editor: FakeEditor = await make_editor(experimental_pi=CAPABLE)
    seen = answer_with(editor, reply)
    result = await editor.call("bash", {"command": "echo x > out.txt"})
    assert (tmp_path / "out.txt").exists() is runs and result["isError"] is not runs
    if says is not None:
        assert says in editor.result_text(result)
    assert await wait_until(lambda: any(e["type"] == "approval_resolved" for e in approval_events(editor)))
    resolved = next(e for e in approval_events(editor) if e["type"] == "approval_resolved")
    assert (resolved["decision"], resolved["by"]) == ("allow" if runs else "deny", "user")
    assert resolved["scope"] == ("session" if runs else None)
    assert len(seen) == 1 and editor.withdrawals == []


async def test_the_timeout_withdraws_the_prompt_and_a_late_answer_changes_nothing(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(
        experimental_pi=CAPABLE, initialization_options={"pi": {"approvals": {"timeoutSeconds": 0.3}}}
    )
    release = asyncio.Event()
    seen = answer_with(editor, release)
    result = await asyncio.wait_for(editor.call("bash", {"command": "touch made.txt"}), 15)
    assert "no answer within 0.3 s; the fallback is deny" in editor.result_text(result)
    assert seen[0]["timeoutMs"] == 300
    assert await wait_until(lambda: editor.withdrawals)
    assert editor.withdrawals == [{"approvalId": seen[0]["approvalId"], "reason": "timeout", "decision": "deny"}]
    release.set()  # the user clicks "Allow once" after the daemon stopped waiting
    listing = await editor.request("pi/listTools", {})
    assert listing["tools"] and not (tmp_path / "made.txt").exists()
    resolved = [e for e in approval_events(editor) if e["type"] == "approval_resolved"]
    assert [(e["decision"], e["by"], e["scope"]) for e in resolved] == [("deny", "timeout", None)]
    again = await editor.call("bash", {"command": "touch made.txt"}, call_id="c2")
    assert len(seen) == 2  # asked again: the late answer recorded nothing
    assert again["isError"] is False and (tmp_path / "made.txt").exists()


@pytest.mark.parametrize("how", ["cancelled", "aborted"])
async def test_a_call_stopped_while_asking_withdraws_the_prompt(make_editor, tmp_path: Path, how: str) -> None:
    editor: FakeEditor = await make_editor(experimental_pi=CAPABLE)
    seen = answer_with(editor, asyncio.Event())
    future = editor.client.protocol.send_request(
        "pi/executeToolCall", {"toolCall": {"id": "c", "name": "bash", "arguments": {"command": "touch made.txt"}}},
        msg_id="stop-me",
    )
    assert await wait_until(lambda: seen)
    if how == "cancelled":
        editor.cancel("stop-me")
    else:
        editor.notify("pi/abort", {"sessionId": "external"})
    result = await asyncio.wait_for(asyncio.wrap_future(future), 15)
    assert result["isError"] is True and editor.result_text(result) == "Operation aborted"
    assert await wait_until(lambda: editor.withdrawals)
    assert editor.withdrawals == [{"approvalId": seen[0]["approvalId"], "reason": how, "decision": "deny"}]
    assert await wait_until(lambda: any(e["type"] == "approval_resolved" for e in approval_events(editor)))
    resolved = next(e for e in approval_events(editor) if e["type"] == "approval_resolved")
    assert (resolved["decision"], resolved["by"]) == ("deny", how)
    assert not (tmp_path / "made.txt").exists()


async def test_a_client_without_the_capability_keeps_show_message_request_and_gets_the_events(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(
        message_answer="Deny", initialization_options={"pi": {"approvals": {"timeoutSeconds": 30}}}
    )
    result = await editor.call("bash", {"command": "touch made.txt"})
    assert result["isError"] is True and len(editor.message_requests) == 1 and editor.approval_requests == []
    assert await wait_until(lambda: len(approval_events(editor)) == 2)
    requested, resolved = approval_events(editor)
    assert requested["title"] == "Run bash: touch made.txt" and requested["approvalId"] == resolved["approvalId"]
    assert (resolved["decision"], resolved["by"], resolved["scope"]) == ("deny", "user", None)
    assert editor.withdrawals == []
