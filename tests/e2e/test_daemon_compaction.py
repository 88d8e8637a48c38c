"""A session longer than its context window goes on after compaction: the daemon over stdio
(FakeEditor), a small pi.contextWindow, a large bash output, the replay server as the model
(serving the summary request as one of its turns)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

from pi_lsp.agent.compaction import SUMMARY_PREFIX, SUMMARY_SYSTEM_PROMPT
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


BIG_OUTPUT = "head -c 40000 /dev/zero | tr '\\0' x"  # one 40000-character line, about 10000 tokens
SUMMARY = "## Goal\nShow the big file.\n\n## State and next steps\nIts content was printed; describe it."


async def test_a_session_longer_than_the_window_goes_on_after_compaction(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    replay = CapturingReplay(parse_recording("\n".join(json.dumps(t) for t in [
        {"reply": {"text": "Looking.", "toolCalls": [{"id": "big1", "name": "bash", "arguments": {"command": BIG_OUTPUT}}]}},
        {"reply": {"text": SUMMARY}},
        {"reply": {"text": "It is 40000 x characters."}},
    ])), log=io.StringIO())
    env = server_env(TMPDIR=str(server_tmp(tmp_path)), PI_LSP_SESSIONS_DIR=str(tmp_path / "journals"))
    pi = {"baseUrl": replay.start(), "model": "replay", "maxRetries": 0, "contextWindow": 8000,
          "compaction": {"reserveTokens": 2000, "keepRecentTokens": 1000}}
    editor = FakeEditor(tmp_path / "ws", initialization_options={"pi": pi}, env=env, message_answer="Allow once")
    try:
        await editor.start()
        reply = await asyncio.wait_for(editor.request("pi/prompt", {"text": "Show me the big file"}), 60)
        session_id = reply["sessionId"]
        assert await wait_until(lambda: any(p["event"]["type"] == "agent_end" for p in editor.events))
    finally:
        await editor.stop()
        replay.stop()
    assert reply == {"sessionId": session_id, "stopReason": "stop"}
    assert replay.divergences == []
    # the second request asked for the summary: its own system prompt, no tools, the history as text
    summary_body = replay.bodies[1]
    assert [m["role"] for m in summary_body["messages"]] == ["system", "user"]
    assert summary_body["messages"][0]["content"] == SUMMARY_SYSTEM_PROMPT
    assert "tools" not in summary_body
    assert summary_body["messages"][1]["content"].startswith("<conversation>\n[User]: Show me the big file")
    # the third request went on from the summary and the recent turn, its huge result trimmed
    messages = replay.bodies[2]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[1]["content"].startswith(SUMMARY_PREFIX) and SUMMARY in messages[1]["content"]
    assert messages[2]["tool_calls"][0]["id"] == "big1"
    assert "characters of this tool result were trimmed" in messages[3]["content"] and len(messages[3]["content"]) < 3000
    events = [p["event"] for p in editor.events if p["sessionId"] == session_id]
    [done] = [e for e in events if e["type"] == "compaction"]
    assert done["reason"] == "threshold" and done["summarized"] is True and done["keptMessages"] == 2
    assert done["tokensBefore"] > 6000 > done["tokensAfter"]
    # the journal keeps the full history and records the compaction
    lines = [json.loads(line) for line in (tmp_path / "journals" / f"{session_id}.jsonl").read_text().splitlines()]
    [compaction] = [line for line in lines if line["type"] == "compaction"]
    assert compaction["summary"] == SUMMARY and compaction["keptMessages"] == 2
    results = [line["message"] for line in lines if line["type"] == "message" and line["message"]["role"] == "toolResult"]
    assert "x" * 39000 in results[0]["content"][0]["text"]
