"""Review before apply through the real daemon (issue 18, ``pi.edit.review: before``).

FakeEditor drives a ``python -m pi_lsp`` subprocess. A client advertising
``capabilities.experimental.pi.review`` gets ``pi/reviewEdit`` and only the hunks it accepts land
(through ``workspace/applyEdit``, versioned); a client with change-annotation support gets an edit
with ``needsConfirmation``; a client with neither gets the edit at once with a notice.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from pi_lsp.demo.fake_editor import ALL_PI_FEATURES, FakeEditor, profile_capabilities

REVIEWING = {**ALL_PI_FEATURES, "review": True}
BEFORE = {"pi": {"edit": {"review": "before"}}}
TEXT = "one\ntwo\nthree\nfour\nfive\n"


async def _edit_two_lines(editor: FakeEditor) -> dict[str, Any]:
    return await editor.call(
        "edit", {"path": "f.py", "edits": [{"oldText": "one", "newText": "ONE"}, {"oldText": "five", "newText": "FIVE"}]},
        "c1",
    )


async def test_the_user_accepts_one_hunk_and_rejects_the_other_with_a_reason(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(TEXT)
    editor: FakeEditor = await make_editor(experimental_pi=REVIEWING, initialization_options=BEFORE)
    editor.open("f.py")

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        first, second = params["hunks"]
        return {"decisions": [
            {"hunk": first["id"], "decision": "accept"},
            {"hunk": second["id"], "decision": "reject", "reason": "keep five lowercase"},
        ]}

    editor.review_answer = answer
    result = await _edit_two_lines(editor)

    [params] = editor.review_requests
    assert (params["sessionId"], params["toolCallId"], params["toolName"]) == ("external", "c1", "edit")
    assert params["path"] == str(tmp_path / "f.py") and params["uri"] == (tmp_path / "f.py").as_uri()
    assert params["timeoutMs"] == 600000
    assert [(h["oldStart"], h["oldLines"], h["newStart"], h["newLines"], h["oldText"], h["newText"])
            for h in params["hunks"]] == [(0, 1, 0, 1, "one\n", "ONE\n"), (4, 1, 4, 1, "five\n", "FIVE\n")]
    assert editor.text("f.py") == "ONE\ntwo\nthree\nfour\nfive\n"
    assert (tmp_path / "f.py").read_text() == "ONE\ntwo\nthree\nfour\nfive\n"  # clean buffer: saved
    [applied] = editor.apply_edits
    assert applied["edit"]["documentChanges"][0]["textDocument"]["version"] == 1  # the versioned edit path
    text = editor.result_text(result)
    assert result["isError"] is False
    assert "accepted 1 of 2 hunks" in text
    assert "hunk 2 of 2 (old lines 5, new lines 5): the user said: keep five lowercase" in text
    assert "+1 ONE" in result["details"]["diff"] and "FIVE" not in result["details"]["diff"]  # what landed
    changes = await editor.request("pi/changes", {"sessionId": "external"})
    [entry] = changes["files"]
    assert [(h["oldText"], h["newText"]) for h in entry["hunks"]] == [("one\n", "ONE\n")]  # what landed


async def test_no_hunk_accepted_writes_nothing_and_is_an_error(make_editor: Any, tmp_path: Path) -> None:
    editor: FakeEditor = await make_editor(experimental_pi=REVIEWING, initialization_options=BEFORE)
    editor.review_answer = lambda params: {"decisions": [
        {"hunk": params["hunks"][0]["id"], "decision": "reject", "reason": "no new files"},
    ]}
    result = await editor.call("write", {"path": "new.txt", "content": "hello\n"}, "w1")
    assert result["isError"] is True
    assert "rejected the write" in editor.result_text(result) and "no new files" in editor.result_text(result)
    assert not (tmp_path / "new.txt").exists() and editor.apply_edits == []
    assert (await editor.request("pi/changes", {"sessionId": "external"}))["files"] == []
    # a dismissed review (null result) rejects every hunk too
    editor.review_answer = None
    result = await editor.call("write", {"path": "new.txt", "content": "hello\n"}, "w2")
    assert result["isError"] is True and not (tmp_path / "new.txt").exists()


async def test_a_review_not_answered_in_time_is_withdrawn(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(TEXT)
    editor: FakeEditor = await make_editor(
        experimental_pi=REVIEWING, initialization_options={"pi": {"edit": {"review": "before", "reviewTimeoutSeconds": 0.3}}}
    )
    never = asyncio.Event()

    async def wait_forever(params: dict[str, Any]) -> dict[str, Any]:
        await never.wait()
        return {"decisions": [{"hunk": h["id"], "decision": "accept"} for h in params["hunks"]]}

    editor.review_answer = wait_forever
    result = await _edit_two_lines(editor)
    assert result["isError"] is True and "did not review the edit" in editor.result_text(result)
    [params] = editor.review_requests
    assert editor.review_withdrawals == [{"reviewId": params["reviewId"], "reason": "timeout"}]
    never.set()  # the late answer is ignored
    await asyncio.sleep(0.1)
    assert (tmp_path / "f.py").read_text() == TEXT and editor.apply_edits == []


async def test_an_aborted_call_withdraws_its_review(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(TEXT)
    editor: FakeEditor = await make_editor(experimental_pi=REVIEWING, initialization_options=BEFORE)
    asked = asyncio.Event()

    async def wait_forever(params: dict[str, Any]) -> None:
        asked.set()
        await asyncio.Event().wait()

    editor.review_answer = wait_forever
    call = asyncio.ensure_future(_edit_two_lines(editor))
    await asyncio.wait_for(asked.wait(), 30)
    editor.notify("pi/abort", {"sessionId": "external"})
    result = await asyncio.wait_for(call, 30)
    assert result["isError"] is True and editor.result_text(result).startswith("Operation aborted")
    assert [w["reason"] for w in editor.review_withdrawals] == ["aborted"]
    assert (tmp_path / "f.py").read_text() == TEXT


def _annotating_capabilities() -> types.ClientCapabilities:
    caps = profile_capabilities("vscode")
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.change_annotation_support = types.ChangeAnnotationsSupportOptions(groups_on_label=True)
    return caps


async def test_without_a_review_ui_the_edit_asks_for_confirmation_by_change_annotation(
    make_editor: Any, tmp_path: Path
) -> None:
    (tmp_path / "f.py").write_text(TEXT)

    async def uncheck_the_second(editor: FakeEditor, params: types.ApplyWorkspaceEditParams) -> None:
        # the user looks at the refactor preview longer than an applyEdit may take, then unticks the
        # second change: the editor applies the rest
        await asyncio.sleep(1.0)
        change = params.edit.document_changes[0]
        change.edits = list(change.edits)[:1]

    editor: FakeEditor = await make_editor(
        capabilities=_annotating_capabilities(), before_apply=uncheck_the_second,
        initialization_options={"pi": {"edit": {"review": "before", "applyTimeoutSeconds": 0.2}}},
    )
    editor.open("f.py")
    result = await _edit_two_lines(editor)

    [applied] = editor.apply_edits
    annotations = applied["edit"]["changeAnnotations"]
    assert annotations["pi.review"]["needsConfirmation"] is True
    assert annotations["pi.review"]["label"] == "pi: edit f.py"
    assert editor.review_requests == []
    assert editor.text("f.py") == "ONE\ntwo\nthree\nfour\nfive\n"
    assert (tmp_path / "f.py").read_text() == "ONE\ntwo\nthree\nfour\nfive\n"
    text = editor.result_text(result)
    assert result["isError"] is False and "1 of 2 hunks landed" in text and "hunk 2 of 2" in text
    [entry] = (await editor.request("pi/changes", {"sessionId": "external"}))["files"]
    assert [h["newText"] for h in entry["hunks"]] == ["ONE\n"]


async def test_a_client_with_neither_gets_the_edit_at_once_with_a_notice(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(TEXT)
    editor: FakeEditor = await make_editor(initialization_options=BEFORE)
    editor.open("f.py")
    result = await _edit_two_lines(editor)
    assert result["isError"] is False and "[Not reviewed:" in editor.result_text(result)
    assert editor.text("f.py") == "ONE\ntwo\nthree\nfour\nFIVE\n" and editor.review_requests == []


async def test_text_the_user_types_during_the_review_is_never_overwritten(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(TEXT)
    editor: FakeEditor = await make_editor(experimental_pi=REVIEWING, initialization_options=BEFORE)
    editor.open("f.py")

    def type_then_accept(params: dict[str, Any]) -> dict[str, Any]:
        editor.type("f.py", 8, 8, "# the user's line\n")  # while the review is open (code point 8: line 3)
        return {"decisions": [{"hunk": h["id"], "decision": "accept"} for h in params["hunks"]]}

    editor.review_answer = type_then_accept
    result = await _edit_two_lines(editor)
    assert result["isError"] is True and "changed while the user reviewed" in editor.result_text(result)
    assert editor.text("f.py") == "one\ntwo\n# the user's line\nthree\nfour\nfive\n" and editor.apply_edits == []
