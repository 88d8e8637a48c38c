"""pi/steer and pi/followUp end to end: the daemon over stdio (FakeEditor), a long bash call, the
replay server as the model."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from pi_lsp.demo.fake_editor import FakeEditor
from pi_lsp.llm.recording import parse_recording
from pi_lsp.llm.replay import ReplayServer
from tests.e2e.daemon_support import server_env, server_tmp, wait_until


class CapturingReplay(ReplayServer):
    """The replay server, also keeping every request body."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bodies: list[Any] = []

    def _take(self, body: Any):  # type: ignore[override]
        self.bodies.append(body)
        return super()._take(body)


# the bash call waits for the test to create `go`, so the steer surely arrives while it runs
LONG_BASH = "echo started > started.txt; while [ ! -f go ]; do sleep 0.05; done; echo finished waiting"


async def test_steer_and_follow_up_during_a_long_bash_call(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    replay = CapturingReplay(parse_recording("\n".join(json.dumps(t) for t in [
        {"reply": {"text": "Running it.", "toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": LONG_BASH}}]}},
        {"reply": {"text": "Understood, staging it is."}},
        {"reply": {"text": "Tests ran."}},
    ])), log=io.StringIO())
    env = server_env(TMPDIR=str(server_tmp(tmp_path)), PI_LSP_SESSIONS_DIR=str(tmp_path / "journals"))
    pi = {"baseUrl": replay.start(), "model": "replay", "maxRetries": 0}
    editor = FakeEditor(ws, initialization_options={"pi": pi}, env=env, message_answer="Allow once")
    try:
        await editor.start()
        with pytest.raises(JsonRpcException, match="No run is active in session nobody"):
            await editor.request("pi/steer", {"sessionId": "nobody", "text": "hi"})
        with pytest.raises(JsonRpcException, match="text must be a non-empty string"):
            await editor.request("pi/followUp", {"sessionId": "x", "text": " "})
        prompt = asyncio.ensure_future(editor.request("pi/prompt", {"text": "run the job"}))
        assert await wait_until(lambda: (ws / "started.txt").exists(), timeout=30)
        session_id = editor.events[0]["sessionId"]
        assert await editor.request("pi/steer", {"sessionId": session_id, "text": "use staging"}) == {"queued": 1}
        assert await editor.request("pi/followUp", {"sessionId": session_id, "text": "then run the tests"}) == {"queued": 1}
        (ws / "go").write_text("")
        reply = await asyncio.wait_for(prompt, 30)
        assert reply == {"sessionId": session_id, "stopReason": "stop"}
        with pytest.raises(JsonRpcException, match="No run is active"):
            await editor.request("pi/steer", {"sessionId": session_id, "text": "too late"})
    finally:
        await editor.stop()
        replay.stop()
    assert replay.divergences == []
    second, third = replay.bodies[1]["messages"], replay.bodies[2]["messages"]
    # the steering message follows the bash result in the very next request
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "user"]
    assert "finished waiting" in second[3]["content"] and second[4]["content"] == "use staging"
    # the follow-up waited until the model was done
    assert [m["role"] for m in third][-2:] == ["assistant", "user"] and third[-1]["content"] == "then run the tests"
    journal = [json.loads(line) for line in (tmp_path / "journals" / f"{session_id}.jsonl").read_text().splitlines()]
    users = [line["message"]["content"] for line in journal if line["type"] == "message" and line["message"]["role"] == "user"]
    assert users == ["run the job", "use staging", "then run the tests"]
