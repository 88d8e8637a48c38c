"""A ``rename`` is reviewed before it is applied, like ``edit`` and ``write`` (issue 18,
``pi.edit.review: before``), through the real daemon with FakeEditor's real pylsp.

With a ``pi/reviewEdit`` client each file's hunks are proposed in turn under the one tool call and
the accepted hunks of every file land as ONE ``workspace/applyEdit``; with change-annotation
support the open files are one edit that needs confirmation (VS Code's refactor preview).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from pi_lsp.demo.fake_editor import ALL_PI_FEATURES, KNOWLEDGE_FEATURES, FakeEditor, profile_capabilities
from tests.e2e.language_server_support import FAST_KNOWLEDGE, require_pylsp

LIB = "def compute(x):\n    return x * 2\n"
A = "from lib import compute\n\nprint(compute(1))\n"
B = "from lib import compute\n\nVALUE = compute(2)\n"
RENAME = {"path": "lib.py", "line": 1, "symbol": "compute", "newName": "double"}
REVIEWING = {**ALL_PI_FEATURES, **KNOWLEDGE_FEATURES, "review": True}


def _project(root: Path) -> None:
    for name, text in [("lib.py", LIB), ("a.py", A), ("b.py", B)]:
        (root / name).write_text(text, encoding="utf-8")


def _settings(**edit: Any) -> dict[str, Any]:
    return {"pi": {**FAST_KNOWLEDGE, "edit": {**FAST_KNOWLEDGE["edit"], "review": "before", **edit}}}


async def _reviewing_editor(make_editor: Any, root: Path, **edit: Any) -> FakeEditor:
    _project(root)
    editor: FakeEditor = await make_editor(
        root, language_server=require_pylsp(), experimental_pi=REVIEWING, initialization_options=_settings(**edit)
    )
    editor.open("lib.py")
    editor.open("a.py")  # b.py is not open: the unopened file is reviewed too
    return editor


def _disk(root: Path) -> dict[str, str]:
    return {name: (root / name).read_text(encoding="utf-8") for name in ("lib.py", "a.py", "b.py")}


async def _journal(editor: FakeEditor) -> dict[str, list[tuple[str, str]]]:
    changes = await editor.request("pi/changes", {"sessionId": "external"})
    return {Path(f["path"]).name: [(h["oldText"], h["newText"]) for h in f["hunks"]] for f in changes["files"]}


def _accept_all(params: dict[str, Any]) -> dict[str, Any]:
    return {"decisions": [{"hunk": h["id"], "decision": "accept"} for h in params["hunks"]]}


async def test_accepted_everywhere_the_rename_lands_as_one_workspace_edit(make_editor: Any, tmp_path: Path) -> None:
    editor = await _reviewing_editor(make_editor, tmp_path)
    editor.review_answer = _accept_all
    result = await editor.call("rename", RENAME, "r1")
    assert result["isError"] is False, editor.result_text(result)
    proposals = editor.review_requests
    assert [Path(p["path"]).name for p in proposals] == ["a.py", "b.py", "lib.py"]  # pylsp's order
    assert {(p["toolCallId"], p["toolName"], p["sessionId"]) for p in proposals} == {("r1", "rename", "external")}
    assert len({p["reviewId"] for p in proposals}) == 3
    assert [(h["oldText"], h["newText"]) for h in proposals[0]["hunks"]] == [
        ("from lib import compute\n", "from lib import double\n"), ("print(compute(1))\n", "print(double(1))\n"),
    ]
    [applied] = editor.apply_edits  # one change, as without review
    assert {Path(c["textDocument"]["uri"]).name for c in applied["edit"]["documentChanges"]} == {"lib.py", "a.py", "b.py"}
    assert _disk(tmp_path) == {n: t.replace("compute", "double") for n, t in [("lib.py", LIB), ("a.py", A), ("b.py", B)]}
    assert editor.result_text(result) == "Renamed `compute` to `double`: 5 places in 3 files.\na.py: 2\nb.py: 2\nlib.py: 1"
    assert set(await _journal(editor)) == {"lib.py", "a.py", "b.py"}


async def test_a_file_the_user_rejects_is_left_out_and_the_result_says_so(make_editor: Any, tmp_path: Path) -> None:
    editor = await _reviewing_editor(make_editor, tmp_path)

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        name = Path(params["path"]).name
        if name == "a.py":  # the whole file: rejected, with a reason
            return {"decisions": [{"hunk": h["id"], "decision": "reject", "reason": "a.py is vendored"} for h in params["hunks"]]}
        if name == "b.py":  # the import line only
            first, second = params["hunks"]
            return {"decisions": [{"hunk": first["id"], "decision": "accept"}, {"hunk": second["id"], "decision": "reject"}]}
        return _accept_all(params)

    editor.review_answer = answer
    result = await editor.call("rename", RENAME, "r1")
    text = editor.result_text(result)
    assert result["isError"] is False, text
    assert len(editor.review_requests) == 3
    [applied] = editor.apply_edits
    assert {Path(c["textDocument"]["uri"]).name for c in applied["edit"]["documentChanges"]} == {"lib.py", "b.py"}
    assert _disk(tmp_path) == {
        "lib.py": LIB.replace("compute", "double"), "a.py": A,
        "b.py": "from lib import double\n\nVALUE = compute(2)\n",
    }
    assert editor.text("a.py") == A
    assert text.startswith(
        "Renamed `compute` to `double`: 2 places in 2 files (only what the user accepted; the rest still uses "
        "the old name, see below).\na.py: 0\n"
    )
    assert f"the user rejected every hunk of the rename in {tmp_path / 'a.py'}; it was not changed" in text
    assert "hunk 1 of 2 (old lines 1, new lines 1): the user said: a.py is vendored" in text
    assert f"the user accepted 1 of 2 hunks; {tmp_path / 'b.py'} holds only those" in text
    assert "hunk 2 of 2 (old lines 3, new lines 3)" in text
    assert await _journal(editor) == {  # what landed, per file
        "lib.py": [("def compute(x):\n", "def double(x):\n")],
        "b.py": [("from lib import compute\n", "from lib import double\n")],
    }


async def test_rejected_everywhere_nothing_is_written_and_the_rename_fails(make_editor: Any, tmp_path: Path) -> None:
    editor = await _reviewing_editor(make_editor, tmp_path)
    editor.review_answer = lambda params: {"decisions": [
        {"hunk": h["id"], "decision": "reject", "reason": "keep the old name"} for h in params["hunks"]
    ]}
    result = await editor.call("rename", RENAME, "r1")
    text = editor.result_text(result)
    assert result["isError"] is True
    assert text.startswith("The user rejected the rename: no hunk was accepted in any file, nothing was written.")
    assert f"{tmp_path / 'b.py'}:\n- hunk 1 of 2 (old lines 1, new lines 1): the user said: keep the old name" in text
    assert len(editor.review_requests) == 3 and editor.apply_edits == []
    assert _disk(tmp_path) == {"lib.py": LIB, "a.py": A, "b.py": B}
    assert await _journal(editor) == {}


async def test_a_review_not_answered_in_time_withdraws_it_and_writes_nothing(make_editor: Any, tmp_path: Path) -> None:
    editor = await _reviewing_editor(make_editor, tmp_path, reviewTimeoutSeconds=0.5)
    never = asyncio.Event()

    async def accept_the_first_only(params: dict[str, Any]) -> dict[str, Any]:
        if len(editor.review_requests) > 1:
            await never.wait()
        return _accept_all(params)

    editor.review_answer = accept_the_first_only
    result = await editor.call("rename", RENAME, "r1")
    text = editor.result_text(result)
    assert result["isError"] is True
    assert text == f"The user did not review the rename of {tmp_path / 'b.py'} within 0.5 s. Nothing was written."
    first, second = editor.review_requests
    assert editor.review_withdrawals == [{"reviewId": second["reviewId"], "reason": "timeout"}]
    never.set()  # a late answer changes nothing
    await asyncio.sleep(0.1)
    assert editor.apply_edits == [] and _disk(tmp_path) == {"lib.py": LIB, "a.py": A, "b.py": B}


def _annotating_capabilities() -> types.ClientCapabilities:
    caps = profile_capabilities("vscode")
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.change_annotation_support = types.ChangeAnnotationsSupportOptions(groups_on_label=True)
    return caps


async def test_with_change_annotations_the_open_files_are_one_edit_to_confirm(make_editor: Any, tmp_path: Path) -> None:
    _project(tmp_path)

    async def untick_a(editor: FakeEditor, params: types.ApplyWorkspaceEditParams) -> None:
        annotations = params.edit.change_annotations or {}
        if any(a.needs_confirmation for a in annotations.values()):
            # the user looks at the preview longer than an applyEdit may take, then unticks a.py
            await asyncio.sleep(1.0)
            params.edit.document_changes = [
                c for c in params.edit.document_changes or [] if not c.text_document.uri.endswith("/a.py")
            ]

    editor: FakeEditor = await make_editor(
        tmp_path, language_server=require_pylsp(), experimental_pi={**ALL_PI_FEATURES, **KNOWLEDGE_FEATURES},
        capabilities=_annotating_capabilities(), before_apply=untick_a,
        initialization_options=_settings(applyTimeoutSeconds=0.3, verifyTimeoutSeconds=1),
    )
    editor.open("lib.py")
    editor.open("a.py")  # b.py is not open: the editor cannot show what the user keeps of it
    result = await editor.call("rename", RENAME, "r1")
    text = editor.result_text(result)
    assert result["isError"] is False, text
    assert editor.review_requests == []
    confirmed, rest = editor.apply_edits
    assert confirmed["edit"]["changeAnnotations"]["pi"]["needsConfirmation"] is True
    assert confirmed["edit"]["changeAnnotations"]["pi"]["label"] == "Rename compute to double"
    assert {Path(c["textDocument"]["uri"]).name for c in confirmed["edit"]["documentChanges"]} == {"lib.py", "a.py"}
    assert [Path(c["textDocument"]["uri"]).name for c in rest["edit"]["documentChanges"]] == ["b.py"]
    assert rest["edit"]["changeAnnotations"]["pi"]["needsConfirmation"] is False
    assert _disk(tmp_path) == {"lib.py": LIB.replace("compute", "double"), "a.py": A, "b.py": B.replace("compute", "double")}
    assert f"0 of 2 hunks landed in {tmp_path / 'a.py'}" in text
    assert f"[Not reviewed: {tmp_path / 'b.py'} is not open in the editor" in text
    assert text.startswith("Renamed `compute` to `double`: 3 places in 2 files (only what the user accepted;")
    assert set(await _journal(editor)) == {"lib.py", "b.py"}


async def test_a_file_changed_during_the_review_writes_nothing(make_editor: Any, tmp_path: Path) -> None:
    editor = await _reviewing_editor(make_editor, tmp_path)

    def type_then_accept(params: dict[str, Any]) -> dict[str, Any]:
        if Path(params["path"]).name == "lib.py":  # the last proposal: the user typed in a.py meanwhile
            editor.type("a.py", 0, 0, "# the user's line\n")
        return _accept_all(params)

    editor.review_answer = type_then_accept
    result = await editor.call("rename", RENAME, "r1")
    assert result["isError"] is True
    assert editor.result_text(result) == (
        f"{tmp_path / 'a.py'} changed while the user reviewed the rename. Nothing was written; read the file again and retry."
    )
    assert editor.apply_edits == [] and editor.text("a.py") == "# the user's line\n" + A
    assert _disk(tmp_path) == {"lib.py": LIB, "a.py": A, "b.py": B}


async def test_an_aborted_rename_withdraws_the_review_under_way(make_editor: Any, tmp_path: Path) -> None:
    editor = await _reviewing_editor(make_editor, tmp_path)
    asked = asyncio.Event()

    async def wait_forever(params: dict[str, Any]) -> None:
        asked.set()
        await asyncio.Event().wait()

    editor.review_answer = wait_forever
    call = asyncio.ensure_future(editor.call("rename", RENAME, "r1"))
    await asyncio.wait_for(asked.wait(), 60)
    editor.notify("pi/abort", {"sessionId": "external"})
    result = await asyncio.wait_for(call, 30)
    assert result["isError"] is True and editor.result_text(result).startswith("Operation aborted")
    [proposal] = editor.review_requests
    assert editor.review_withdrawals == [{"reviewId": proposal["reviewId"], "reason": "aborted"}]
    assert editor.apply_edits == [] and _disk(tmp_path) == {"lib.py": LIB, "a.py": A, "b.py": B}


async def test_an_editor_that_cannot_review_gets_the_rename_at_once_with_one_notice(make_editor: Any, tmp_path: Path) -> None:
    _project(tmp_path)
    editor: FakeEditor = await make_editor(tmp_path, language_server=require_pylsp(), initialization_options=_settings())
    result = await editor.call("rename", RENAME, "r1")
    text = editor.result_text(result)
    assert result["isError"] is False, text
    assert len(editor.apply_edits) == 1 and editor.review_requests == []
    assert text.count("[Not reviewed: pi.edit.review is \"before\" but this editor can show neither") == 1
    assert _disk(tmp_path) == {n: t.replace("compute", "double") for n, t in [("lib.py", LIB), ("a.py", A), ("b.py", B)]}


async def test_a_closed_file_changed_while_the_user_confirmed_is_not_overwritten(make_editor: Any, tmp_path: Path) -> None:
    _project(tmp_path)

    async def change_b_meanwhile(editor: FakeEditor, params: types.ApplyWorkspaceEditParams) -> None:
        annotations = params.edit.change_annotations or {}
        if any(a.needs_confirmation for a in annotations.values()):
            (tmp_path / "b.py").write_text(B + "# changed meanwhile\n", encoding="utf-8")

    editor: FakeEditor = await make_editor(
        tmp_path, language_server=require_pylsp(), experimental_pi={**ALL_PI_FEATURES, **KNOWLEDGE_FEATURES},
        capabilities=_annotating_capabilities(), before_apply=change_b_meanwhile, initialization_options=_settings(),
    )
    editor.open("lib.py")
    editor.open("a.py")
    result = await editor.call("rename", RENAME, "r1")
    text = editor.result_text(result)
    assert result["isError"] is True
    assert text.startswith(
        f"The rename landed in {tmp_path / 'a.py'}, {tmp_path / 'lib.py'} as the user confirmed it, but the files "
        f"not open in the editor were not changed: {tmp_path / 'b.py'} changed on disk"
    ), text
    assert _disk(tmp_path) == {
        "lib.py": LIB.replace("compute", "double"), "a.py": A.replace("compute", "double"), "b.py": B + "# changed meanwhile\n",
    }
    assert set(await _journal(editor)) == {"lib.py", "a.py"}  # what landed is journaled even so
