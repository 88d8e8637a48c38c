"""Plain LSP (issue 16) end to end: the daemon over stdio, FakeEditor as a generic client (code
actions, ``workspace/executeCommand``, work-done progress, ``window/showDocument``), the replay
server as the model. The real editors' scenario is tests/editors/test_plain_lsp.py; these cover
what an editor run cannot reach cheaply: refusals, capabilities, kinds, the selection as context,
cancelling the progress."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException

from pi_lsp.demo.fake_editor import FakeEditor
from pi_lsp.demo.fake_profiles import profile_capabilities
from pi_lsp.llm.recording import parse_recording
from pi_lsp.llm.replay import ReplayServer
from tests.e2e.daemon_support import server_env, server_tmp, wait_until

CONVERTER = get_converter()
GREET = 'def greet():\n    return "hi"\n\n\n# pi: make bye say ciao\ndef bye():\n    return "bye"\n'
BYE_EDIT = {"id": "e1", "name": "edit", "arguments": {
    "path": "greet.py", "edits": [{"oldText": 'return "bye"', "newText": 'return "ciao"'}]}}


class CapturingReplay(ReplayServer):
    """The replay server, keeping every request body (to read the prompt)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bodies: list[Any] = []

    def _take(self, body: Any):  # type: ignore[override]
        self.bodies.append(body)
        return super()._take(body)


def generic_capabilities(*, literals: bool = True, progress: bool = True, show_document: bool = True) -> types.ClientCapabilities:
    """A generic client: code action literals, work-done progress and showDocument as asked."""
    caps = profile_capabilities("vscode")
    assert caps.text_document is not None and caps.window is not None
    if literals:
        caps.text_document.code_action = types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(value_set=["", "quickfix", "refactor", "source"])
            )
        )
    caps.window.work_done_progress = progress or None
    caps.window.show_document = types.ShowDocumentClientCapabilities(support=True) if show_document else None
    return caps


def _json(value: Any) -> Any:
    """An lsprotocol object (or plain JSON) as its JSON value."""
    return value if isinstance(value, dict) else CONVERTER.unstructure(value)


class Client:
    """FakeEditor plus what a generic client records: progress, shown documents."""

    def __init__(self, editor: FakeEditor, replay: CapturingReplay) -> None:
        self.editor = editor
        self.replay = replay
        self.progress: list[dict[str, Any]] = []
        self.created: list[Any] = []
        self.shown: list[dict[str, Any]] = []
        client = editor.client
        # keep code action replies as sent: structuring the CodeAction | Command union turns a
        # CodeAction whose command is a Command into a Command
        client.protocol._converter.register_structure_hook(
            types.CodeActionResponse,
            lambda obj, cls: cls(id=obj["id"], result=obj.get("result"), jsonrpc=obj.get("jsonrpc", "2.0")),
        )

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params: types.WorkDoneProgressCreateParams) -> None:
            self.created.append(params.token)

        @client.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            value = params.value
            self.progress.append(_json(value))

        @client.feature(types.WINDOW_SHOW_DOCUMENT)
        def show(params: types.ShowDocumentParams) -> types.ShowDocumentResult:
            self.shown.append({"uri": params.uri, "takeFocus": params.take_focus, "external": params.external})
            return types.ShowDocumentResult(success=True)

    async def actions(
        self, line: int, end_line: int | None = None, only: list[str] | None = None, automatic: bool = False
    ) -> list[dict[str, Any]]:
        end = types.Position(line=end_line if end_line is not None else line, character=0 if end_line else 3)
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=self.editor.buffer("greet.py").uri),
            range=types.Range(start=types.Position(line=line, character=0), end=end),
            context=types.CodeActionContext(
                diagnostics=[], only=only, trigger_kind=types.CodeActionTriggerKind.Automatic if automatic else None
            ),
        )
        result = await asyncio.wait_for(self.editor.request(types.TEXT_DOCUMENT_CODE_ACTION, params), 20)
        return [_json(a) for a in result or []]

    async def execute(self, command: str, *arguments: Any) -> Any:
        params = types.ExecuteCommandParams(command=command, arguments=list(arguments))
        return await asyncio.wait_for(self.editor.request(types.WORKSPACE_EXECUTE_COMMAND, params), 20)

    def ends(self) -> list[dict[str, Any]]:
        return [p for p in self.progress if p.get("kind") == "end"]


@pytest.fixture
async def start(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``await start(turns, caps=..., **pi settings)`` -> :class:`Client` (stopped at teardown)."""
    clients: list[Client] = []

    async def make(turns: list[dict[str, Any]], caps: types.ClientCapabilities | None = None, **settings: Any) -> Client:
        replay = CapturingReplay(parse_recording("\n".join(json.dumps(t) for t in turns)), log=io.StringIO())
        url = replay.start()
        pi = {"baseUrl": url, "model": "replay", "maxRetries": 0, **settings}
        env = server_env(TMPDIR=str(server_tmp(tmp_path)), PI_LSP_SESSIONS_DIR=str(tmp_path / "journals"))
        editor = FakeEditor(tmp_path / "ws", capabilities=caps or generic_capabilities(), experimental_pi={},
                            initialization_options={"pi": pi}, env=env, message_answer="Allow once")
        client = Client(editor, replay)
        clients.append(client)
        await editor.start()
        editor.open("greet.py")
        return client

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greet.py").write_text(GREET, encoding="utf-8")
    yield make
    for client in clients:
        await client.editor.stop()
        client.replay.stop()


async def test_the_instruction_runs_with_its_block_progress_and_transcript(start, tmp_path: Path) -> None:
    client = await start([
        {"reply": {"text": "Making bye say ciao.", "toolCalls": [BYE_EDIT]}},
        {"reply": {"text": "Done."}},
    ])
    caps = client.editor.initialize_result.capabilities
    assert list(caps.execute_command_provider.commands) == [
        "pi.runInstruction", "pi.prompt", "pi.abort", "pi.revertHunk", "pi.revertTurn"]
    assert list(caps.code_action_provider.code_action_kinds) == ["refactor.pi.run", "refactor.pi.abort", "refactor.pi.revert"]
    assert await client.actions(3) == []  # a blank line holds no instruction
    [action] = await client.actions(4)
    assert action["title"] == "Pi: run this instruction" and action["kind"] == "refactor.pi.run"
    assert action["command"]["command"] == "pi.runInstruction"
    assert await client.actions(4, only=["quickfix"]) == []
    assert len(await client.actions(4, only=["refactor"])) == 1

    reply = await client.execute("pi.runInstruction", *action["command"]["arguments"])
    session = reply["sessionId"]
    assert await wait_until(lambda: client.ends(), timeout=30), client.progress
    assert client.editor.text("greet.py") == 'def greet():\n    return "hi"\n\n\ndef bye():\n    return "ciao"\n'
    removal, edit = client.editor.apply_edits
    assert removal["label"] == "pi: remove the instruction comment"
    assert removal["edit"]["documentChanges"][0]["textDocument"]["version"] == 1  # versioned
    prompt = client.replay.bodies[0]["messages"][-1]["content"]
    assert prompt.startswith("make bye say ciao\n\n(Written as a `pi:` comment at line 5 of greet.py;")
    assert prompt.endswith('lines 5-6 of greet.py as the file is now:\n\n```python\ndef bye():\n    return "bye"\n```')
    # progress: created first, begin with the instruction, a report per tool call, end
    assert client.created == [client.created[0]] and client.progress[0]["kind"] == "begin"
    assert client.progress[0]["message"] == "make bye say ciao" and client.progress[0]["cancellable"] is True
    assert {"kind": "report", "message": "edit: greet.py"} in client.progress
    assert client.ends() == [{"kind": "end", "message": "Done"}]
    # the transcript, opened without taking the focus
    transcript = tmp_path / "journals" / f"{session}.md"
    assert client.shown == [{"uri": transcript.resolve().as_uri(), "takeFocus": False, "external": False}]
    assert reply["transcript"] == client.shown[0]["uri"]
    text = transcript.read_text(encoding="utf-8")
    assert "- `edit: greet.py`\n  - ✓ edit: Successfully replaced 1 block(s) in greet.py.\n" in text
    assert '```diff\n' in text and '+    return "ciao"' in text and text.endswith("## Result\n\nDone\n")
    assert not client.editor.shown_messages  # progress and the document said it all


async def test_a_selection_goes_along_instead_of_the_block(start) -> None:
    client = await start([{"reply": {"text": "Done."}}])
    [action] = await client.actions(0, end_line=6)  # lines 1-6 selected, the instruction among them
    assert action["command"]["arguments"][0]["selection"] == {"startLine": 0, "endLine": 5}
    client.editor.type("greet.py", 0, 0, "import os\n")  # the user types above it meanwhile (didChange first)
    await client.execute("pi.runInstruction", *action["command"]["arguments"])
    assert await wait_until(lambda: client.ends(), timeout=30)
    prompt = client.replay.bodies[0]["messages"][-1]["content"]
    assert "comment at line 6 of greet.py" in prompt  # found again one line further down
    assert prompt.endswith('lines 2-6 of greet.py as the file is now:\n\n```python\n'
                           'def greet():\n    return "hi"\n\n\ndef bye():\n```')


async def test_refusals_remove_nothing_and_say_why(start) -> None:
    client = await start([{"reply": {"text": "Done."}}], model=None)
    [action] = await client.actions(4)
    args = action["command"]["arguments"][0]
    with pytest.raises(JsonRpcException) as error:
        await client.execute("pi.runInstruction", args)
    assert error.value.code == -32803 and "No model is configured" in error.value.message
    with pytest.raises(JsonRpcException) as error:
        await client.execute("pi.runInstruction", {**args, "instruction": "something else"})
    assert "no line holds the instruction 'something else' now" in error.value.message
    with pytest.raises(JsonRpcException) as error:
        await client.execute("pi.runInstruction", {**args, "line": -1})
    assert error.value.code == -32602 and "line must be a non-negative integer" in error.value.message
    with pytest.raises(JsonRpcException) as error:
        await client.execute("pi.prompt")
    assert error.value.code == -32602 and "expects one argument" in error.value.message
    assert await client.execute("pi.abort") == {"aborted": False}
    assert client.editor.apply_edits == [] and client.editor.text("greet.py") == GREET
    assert any("No model is configured" in m for m in client.editor.shown_messages)


async def test_a_second_start_is_refused_and_cancelling_the_progress_aborts(start, tmp_path: Path) -> None:
    sleep = {"id": "s1", "name": "bash", "arguments": {"command": "sleep 30"}}
    client = await start([{"reply": {"text": "Waiting.", "toolCalls": [sleep]}}])
    reply = await client.execute("pi.prompt", {"text": "wait a while"})
    assert await wait_until(lambda: {"kind": "report", "message": "bash: sleep 30"} in client.progress, timeout=30)
    with pytest.raises(JsonRpcException) as error:
        await client.execute("pi.prompt", "another")
    assert error.value.code == -32803 and "already processing a prompt" in error.value.message
    with pytest.raises(JsonRpcException) as error:
        await client.execute("pi.revertTurn", {"sessionId": reply["sessionId"], "turn": 1})
    assert error.value.code == -32803 and "before undoing its changes" in error.value.message
    with pytest.raises(JsonRpcException) as error:
        await client.execute("pi.revertHunk", {"sessionId": reply["sessionId"]})
    assert error.value.code == -32602 and "hunk must be a non-empty string" in error.value.message
    [abort] = await client.actions(4, only=["refactor.pi.abort"])
    assert abort["title"] == "Pi: abort the run" and abort["command"]["command"] == "pi.abort"
    client.editor.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token=client.created[0]))
    assert await wait_until(lambda: client.ends(), timeout=30)
    assert client.ends() == [{"kind": "end", "message": "Aborted"}]
    text = (tmp_path / "journals" / f"{reply['sessionId']}.md").read_text(encoding="utf-8")
    assert text.endswith("## Result\n\nAborted\n")


async def test_a_minimal_client_without_apply_edit_literals_progress_or_show_document(start, tmp_path: Path) -> None:
    """Like Vim's ALE: no ``workspace.applyEdit``, so the removal and the agent's edit go to disk
    (Pi's behaviour); no code action literals, no progress, no showDocument: messages instead."""
    caps = generic_capabilities(literals=False, progress=False, show_document=False)
    assert caps.workspace is not None
    caps.workspace.apply_edit = False
    client = await start([{"reply": {"text": "Editing.", "toolCalls": [BYE_EDIT]}}, {"reply": {"text": "Done."}}], caps=caps)
    [command] = await client.actions(4)
    assert set(command) == {"title", "command", "arguments"} and command["command"] == "pi.runInstruction"
    reply = await client.execute("pi.runInstruction", *command["arguments"])
    transcript = tmp_path / "journals" / f"{reply['sessionId']}.md"
    assert await wait_until(lambda: "Pi: Done" in client.editor.shown_messages, timeout=30), client.editor.shown_messages
    assert client.created == [] and client.progress == [] and client.shown == [] and client.editor.apply_edits == []
    assert f"Pi is running; transcript: {transcript}" in client.editor.shown_messages
    disk = (tmp_path / "ws" / "greet.py").read_text(encoding="utf-8")
    assert disk == 'def greet():\n    return "hi"\n\n\ndef bye():\n    return "ciao"\n'


async def test_shutdown_during_a_run_ends_it_and_the_daemon_exits(start, tmp_path: Path) -> None:
    sleep = {"id": "s1", "name": "bash", "arguments": {"command": "sleep 30"}}
    client = await start([{"reply": {"text": "Waiting.", "toolCalls": [sleep]}}])
    reply = await client.execute("pi.prompt", "wait a while")
    assert await wait_until(lambda: {"kind": "report", "message": "bash: sleep 30"} in client.progress, timeout=30)
    assert await client.editor.stop() == 0
    text = (tmp_path / "journals" / f"{reply['sessionId']}.md").read_text(encoding="utf-8")
    assert text.endswith("## Result\n\nAborted\n")


async def test_undo_an_agent_hunk_and_the_last_turn_by_code_action(start) -> None:
    hello = {"id": "e2", "name": "edit", "arguments": {
        "path": "greet.py", "edits": [{"oldText": 'return "hi"', "newText": 'return "hello"'}]}}
    client = await start([
        {"reply": {"text": "First bye.", "toolCalls": [BYE_EDIT]}},
        {"reply": {"text": "Then greet.", "toolCalls": [hello]}},
        {"reply": {"text": "Done."}},
    ])
    assert await client.actions(1) == [] and len(await client.actions(4)) == 1  # nothing to undo yet
    await client.execute("pi.prompt", "change both")
    assert await wait_until(lambda: client.ends(), timeout=30)
    both = 'def greet():\n    return "hello"\n\n\n# pi: make bye say ciao\ndef bye():\n    return "ciao"\n'
    assert client.editor.text("greet.py") == both
    # line 2 (0-based 1) holds the second turn's hunk: the hunk and the last turn are offered
    assert await client.actions(1, automatic=True) == []  # not for a lightbulb's automatic request
    titles = [(a["title"], a["kind"]) for a in await client.actions(1)]
    assert titles == [("Pi: undo this agent hunk", "refactor.pi.revert"), ("Pi: undo the last turn", "refactor.pi.revert")]
    assert [a["title"] for a in await client.actions(3)] == ["Pi: undo the last turn"]  # no hunk on line 4
    [turn] = [a for a in await client.actions(3)]
    report = await client.execute("pi.revertTurn", *turn["command"]["arguments"])
    assert report["conflicts"] == [] and len(report["reverted"]) == 1
    assert client.editor.text("greet.py") == both.replace('"hello"', '"hi"')
    # the first turn's hunk is still offered on its line; undoing it leaves the rest alone
    [hunk, last] = await client.actions(6)
    assert hunk["title"] == "Pi: undo this agent hunk" and last["command"]["arguments"][0]["turn"] == 1
    await client.execute("pi.revertHunk", *hunk["command"]["arguments"])
    assert client.editor.text("greet.py") == GREET
    assert client.editor.apply_edits[-1]["label"] == "pi: revert greet.py"
    assert [a["title"] for a in await client.actions(6)] == []
