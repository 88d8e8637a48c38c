"""``pi/abort {sessionId: "external"}`` over real stdio: it aborts the running ``pi/executeToolCall(s)``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pi_lsp.demo.fake_editor import FakeEditor
from tests.e2e.daemon_support import wait_until

ALLOW = "Allow once"


def _bash(call_id: str, marker: Path) -> dict:
    return {"id": call_id, "name": "bash", "arguments": {"command": f"echo partial; touch {marker}; sleep 60"}}


async def test_abort_external_aborts_running_tool_requests(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(message_answer=ALLOW)
    one, many = tmp_path / "one", tmp_path / "many"
    single = asyncio.ensure_future(editor.request("pi/executeToolCall", {"toolCall": _bash("s", one)}))
    batch = asyncio.ensure_future(editor.request("pi/executeToolCalls", {"toolCalls": [_bash("b", many)]}))
    assert await wait_until(lambda: one.exists() and many.exists(), timeout=30)
    editor.notify("pi/abort", {"sessionId": "external"})
    result = await asyncio.wait_for(single, 30)
    results = (await asyncio.wait_for(batch, 30))["results"]
    for message, call_id in ((result, "s"), (results[0], "b")):
        assert message["toolCallId"] == call_id and message["isError"] is True
        text = editor.result_text(message)
        assert "partial" in text and "Command aborted" in text
    assert (await editor.call("read", {"path": "one"}))["isError"] is False  # the daemon keeps serving


async def test_abort_of_a_named_session_leaves_external_calls_running(make_editor, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(message_answer=ALLOW)
    marker = tmp_path / "started"
    command = f"touch {marker}; while [ ! -e {tmp_path / 'go'} ]; do sleep 0.05; done; echo finished"
    task = asyncio.ensure_future(editor.call("bash", {"command": command}, call_id="k"))
    assert await wait_until(marker.exists, timeout=30)
    editor.notify("pi/abort", {"sessionId": "some-agent-session"})
    # a request sent after the notification is handled after it: the abort has been processed
    assert (await editor.call("read", {"path": "started"}))["isError"] is False
    (tmp_path / "go").touch()
    result = await asyncio.wait_for(task, 30)
    assert result["isError"] is False and "finished" in editor.result_text(result)
