"""The user's prompt as the unit of review and undo (issue 18): ``pi/changes`` and
``pi/revertChanges`` with ``prompt`` (the n-th ``pi/prompt`` of the session) or ``turns``
(a range of model calls), through the real daemon with the replay server as the model."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from pi_lsp.demo.fake_editor import FakeEditor
from pi_lsp.llm.recording import parse_recording
from pi_lsp.llm.replay import ReplayServer
from tests.e2e.daemon_support import server_env, server_tmp

TEXT = "one\ntwo\nthree\n"


def _edit(call_id: str, old: str, new: str) -> dict[str, Any]:
    return {"id": call_id, "name": "edit", "arguments": {"path": "f.txt", "edits": [{"oldText": old, "newText": new}]}}


TURNS = [
    {"reply": {"text": "First.", "toolCalls": [_edit("e1", "one", "ONE")]}},
    {"reply": {"text": "Second.", "toolCalls": [_edit("e2", "two", "TWO")]}},
    {"reply": {"text": "Done."}},
    {"reply": {"text": "Third.", "toolCalls": [_edit("e3", "three", "THREE")]}},
    {"reply": {"text": "Done again."}},
]


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[FakeEditor]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text(TEXT)
    replay = ReplayServer(parse_recording("\n".join(json.dumps(t) for t in TURNS)), log=io.StringIO())
    url = replay.start()
    env = server_env(TMPDIR=str(server_tmp(tmp_path)), PI_LSP_SESSIONS_DIR=str(tmp_path / "journals"))
    client = FakeEditor(ws, env=env, message_answer="Allow once",
                        initialization_options={"pi": {"baseUrl": url, "model": "replay", "maxRetries": 0}})
    await client.start()
    client.open("f.txt")
    yield client
    await client.stop()
    replay.stop()


async def _two_prompts(editor: FakeEditor) -> str:
    first = await editor.request("pi/prompt", {"text": "capitalise one and two"})
    assert first["stopReason"] == "stop", first
    second = await editor.request("pi/prompt", {"text": "and three", "sessionId": first["sessionId"]})
    assert second["stopReason"] == "stop", second
    assert editor.text("f.txt") == "ONE\nTWO\nTHREE\n"
    return first["sessionId"]


def _new_texts(reply: dict[str, Any]) -> list[str]:
    return [h["newText"] for entry in reply["files"] for h in entry["hunks"]]


async def test_changes_report_prompts_and_select_by_prompt_or_turn_range(editor: FakeEditor) -> None:
    session = await _two_prompts(editor)
    whole = await editor.request("pi/changes", {"sessionId": session})
    assert whole["prompts"] == [{"prompt": 1, "turns": [1, 3]}, {"prompt": 2, "turns": [4, 5]}]
    assert whole["currentPrompt"] == 2 and whole["currentTurn"] == 5
    calls = whole["files"][0]["toolCalls"]
    assert [(c["toolCallId"], c["turn"], c["prompt"]) for c in calls] == [("e1", "1", "1"), ("e2", "2", "1"), ("e3", "4", "2")]

    first = await editor.request("pi/changes", {"sessionId": session, "prompt": 1})
    assert first["prompt"] == 1 and first["turns"] == [1, 3]
    assert _new_texts(first) == ["ONE\nTWO\n"]  # both model calls of the prompt, one hunk
    assert _new_texts(await editor.request("pi/changes", {"sessionId": session, "prompt": 2})) == ["THREE\n"]
    assert _new_texts(await editor.request("pi/changes", {"sessionId": session, "turns": [2, 4]})) == ["TWO\nTHREE\n"]
    assert _new_texts(await editor.request("pi/changes", {"sessionId": session, "turn": 1})) == ["ONE\n"]  # as before


async def test_revert_the_last_prompt_leaves_the_earlier_one(editor: FakeEditor) -> None:
    session = await _two_prompts(editor)
    report = await editor.request("pi/revertChanges", {"sessionId": session, "prompt": 2})
    assert report["conflicts"] == [] and len(report["reverted"]) == 1
    assert editor.text("f.txt") == "ONE\nTWO\nthree\n"
    report = await editor.request("pi/revertChanges", {"sessionId": session, "prompt": 1})
    assert report["conflicts"] == [] and len(report["reverted"]) == 1
    assert editor.text("f.txt") == TEXT


async def test_bad_prompt_selections_are_invalid_params(editor: FakeEditor) -> None:
    session = await _two_prompts(editor)
    for params in ({"prompt": 3}, {"prompt": 0}, {"prompt": 1, "turn": 1}, {"turns": [3, 2]}, {"turns": [1]}):
        with pytest.raises(JsonRpcException) as caught:
            await editor.request("pi/revertChanges", {"sessionId": session, **params})
        assert caught.value.code == -32602, params
    assert editor.text("f.txt") == "ONE\nTWO\nTHREE\n"
