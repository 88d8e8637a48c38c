"""Diagnostics after edit/write through a real daemon, with FakeEditor's real pylsp (issue 17): the
error an edit introduces is in its result, an edit that fixes it lists nothing, a problem left from
an earlier change is reminded, a file without a language server is not waited for, and a report
about the text before the edit that arrives after it does not end the wait."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pi_lsp.demo.fake_editor import FakeEditor
from tests.e2e.daemon_support import wait_until
from tests.e2e.language_server_support import FAST_KNOWLEDGE, require_pylsp

APP = "def main(total):\n    return total\n"


def _edit(path: str, old: str, new: str) -> dict:
    return {"path": path, "edits": [{"oldText": old, "newText": new}]}


async def _editor(make_editor, root: Path, **pi) -> FakeEditor:
    editor: FakeEditor = await make_editor(
        root, language_server=require_pylsp(), initialization_options={"pi": {**FAST_KNOWLEDGE, **pi}}
    )
    return editor


async def test_an_introduced_error_is_reported_and_its_fix_is_not(make_editor, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    editor = await _editor(make_editor, tmp_path)
    editor.open("app.py")
    assert await editor.wait_diagnostics("app.py")
    broken = await editor.call("edit", _edit("app.py", "    return total\n", "    return totl\n"), "c1")
    assert broken["isError"] is False, editor.result_text(broken)
    assert editor.result_text(broken).endswith(
        "\n\nDiagnostics after this change (pylsp): 1 new problem:\n"
        "app.py:2: error: undefined name 'totl' (pyflakes)"
    )
    assert (tmp_path / "app.py").read_text(encoding="utf-8").endswith("return totl\n")  # saved
    fixed = await editor.call("edit", _edit("app.py", "    return totl\n", "    return total\n"), "c2")
    assert fixed["isError"] is False, editor.result_text(fixed)
    assert "Diagnostics" not in editor.result_text(fixed)
    assert "Still there" not in editor.result_text(fixed)
    assert editor.result_text(fixed) == "Successfully replaced 1 block(s) in app.py."


async def test_an_unrelated_edit_reminds_of_an_earlier_problem_once(make_editor, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    editor = await _editor(make_editor, tmp_path)
    editor.open("app.py")
    assert await editor.wait_diagnostics("app.py")
    await editor.call("edit", _edit("app.py", "    return total\n", "    return totl\n"), "c1")
    # a line inserted above: the old problem moves to line 4 and is not "introduced" again
    second = await editor.call("edit", _edit("app.py", "def main(total):\n", "def main(total):\n    \"\"\"Main.\"\"\"\n"), "c2")
    text = editor.result_text(second)
    assert "new problem" not in text
    assert text.endswith("\n\nStill there from earlier changes: app.py:3: error: undefined name 'totl' (pyflakes)")
    third = await editor.call("edit", _edit("app.py", "\"\"\"Main.\"\"\"", "\"\"\"The main.\"\"\""), "c3")
    assert editor.result_text(third) == "Successfully replaced 1 block(s) in app.py."  # reminded once


async def test_no_wait_without_a_language_server_and_the_setting_turns_it_off(make_editor, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\n", encoding="utf-8")
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    editor = await _editor(make_editor, tmp_path)
    result = await editor.call("write", {"path": "notes.txt", "content": "two\n"})
    assert editor.result_text(result) == "Successfully wrote 4 bytes to notes.txt"
    assert editor.diagnostics_requests == [{"uris": [(tmp_path / "notes.txt").as_uri()]}]  # the before-pull only
    off = await _editor(make_editor, tmp_path, diagnostics={"afterEdit": False})
    off.open("app.py")
    result = await off.call("edit", _edit("app.py", "    return total\n", "    return totl\n"))
    assert editor.result_text(result) == "Successfully replaced 1 block(s) in app.py."
    assert off.diagnostics_requests == []


async def test_a_report_about_the_text_before_the_edit_does_not_end_the_wait(make_editor, tmp_path: Path) -> None:
    """The settle race: right after the edit lands, the editor forwards a publish computed for the
    version before it. Dated with that version (pi/diagnosticsChanged ``versions``), it must not
    count as the server having checked the edit: pylsp's report of the edited text, taken in a
    second later, is what the result shows (undated, the wait would end 0.3 s after the stale one
    and pull the old diagnostics)."""
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    editor = await _editor(make_editor, tmp_path)
    buffer = editor.open("app.py")
    assert await editor.wait_diagnostics("app.py")
    assert editor.language is not None
    stale = {"uris": [buffer.uri], "versions": {buffer.uri: buffer.version}}
    editor.language.publish_delay = 1.0

    def stale_report(ed: FakeEditor, _params: object) -> None:  # sent just after the edit is applied
        asyncio.get_running_loop().call_soon(ed.notify, "pi/diagnosticsChanged", stale)

    editor.before_apply = stale_report
    broken = await editor.call("edit", _edit("app.py", "    return total\n", "    return totl\n"), "c1")
    assert buffer.version > stale["versions"][buffer.uri]
    assert editor.result_text(broken).endswith(
        "\n\nDiagnostics after this change (pylsp): 1 new problem:\n"
        "app.py:2: error: undefined name 'totl' (pyflakes)"
    ), editor.result_text(broken)


async def test_malformed_versions_are_logged_and_leave_the_change_undated(make_editor, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    editor = await _editor(make_editor, tmp_path)
    uri = editor.open("app.py").uri
    editor.notify("pi/diagnosticsChanged", {"uris": [uri], "versions": [3]})
    editor.notify("pi/diagnosticsChanged", {"uris": [uri], "versions": {uri: "3"}})
    assert await wait_until(lambda: sum("pi/diagnosticsChanged" in m for m in editor.log_messages) >= 2)
    logged = [m for m in editor.log_messages if "pi/diagnosticsChanged" in m]
    assert "versions must be {uri: integer}" in logged[0] and "non-integer versions left out" in logged[1], logged
    result = await editor.call("edit", _edit("app.py", "    return total\n", "    return totl\n"))
    assert editor.result_text(result).endswith("app.py:2: error: undefined name 'totl' (pyflakes)")
