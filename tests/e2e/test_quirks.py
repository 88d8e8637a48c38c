"""Each FakeEditor quirk profile (real-clients.md behaviour matrix) through the edit path over real
stdio: the versions sent, the verification outcome (design.md section 4 step 5), and that no edit
is ever applied twice or lost silently when the user types while it is in flight."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.demo.fake_editor import FakeEditor
from tests.e2e.daemon_support import wait_until

FAST = {"pi": {"edit": {"applyTimeoutSeconds": 2, "verifyTimeoutSeconds": 1}}}
OPEN_VERSION = {"vscode": 1, "neovim": 0, "eglot": 0}


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"path": path, "edits": [{"oldText": old, "newText": new}]}


def _sent_version(editor: FakeEditor) -> Any:
    edit = editor.apply_edits[-1]["edit"]
    assert "documentChanges" in edit, edit  # versioned for every profile, Neovim included
    return edit["documentChanges"][0]["textDocument"]["version"]


async def _open(make_editor, tmp_path: Path, profile: str, **options: Any) -> FakeEditor:
    (tmp_path / "m.py").write_bytes(b"def f():\n    return 1\n")
    editor: FakeEditor = await make_editor(profile=profile, initialization_options=FAST, **options)
    editor.open("m.py", version=OPEN_VERSION[profile])
    return editor


async def test_vscode_contiguous_versions_verified_before_the_reply_and_saved(make_editor, tmp_path: Path) -> None:
    editor = await _open(make_editor, tmp_path, "vscode")
    for n, call_id in [(2, "c1"), (3, "c2")]:
        result = await editor.call("edit", _edit("m.py", f"return {n - 1}", f"return {n}"), call_id)
        assert result["isError"] is False, editor.result_text(result)
        assert "not yet confirmed" not in editor.result_text(result)
    assert [e["edit"]["documentChanges"][0]["textDocument"]["version"] for e in editor.apply_edits] == [1, 2]
    assert editor.buffer("m.py").version == 3
    assert (tmp_path / "m.py").read_bytes() == b"def f():\n    return 3\n"


async def test_neovim_changedtick_versions_and_late_didchange_are_verified_and_saved(make_editor, tmp_path: Path) -> None:
    editor = await _open(make_editor, tmp_path, "neovim")
    assert "documentChanges" not in str(editor.capabilities.workspace.workspace_edit)  # type: ignore[union-attr]
    first = await editor.call("edit", _edit("m.py", "return 1", "return 2"))
    assert first["isError"] is False and "not yet confirmed" not in editor.result_text(first)
    assert _sent_version(editor) == 0
    second = await editor.call("edit", _edit("m.py", "return 2", "return 3"), "c2")
    assert second["isError"] is False, editor.result_text(second)
    assert _sent_version(editor) == 4  # the changedtick the late didChange carried
    assert editor.save_requests[-1]["documents"][0]["version"] == 8
    assert (tmp_path / "m.py").read_bytes() == b"def f():\n    return 3\n"


async def test_eglot_without_didchange_is_applied_not_confirmed_and_not_saved_until_flushed(
    make_editor, tmp_path: Path
) -> None:
    editor = await _open(make_editor, tmp_path, "eglot")
    result = await editor.call("edit", _edit("m.py", "return 1", "return 2"))
    assert result["isError"] is False, editor.result_text(result)
    assert "applied by the editor, not yet confirmed" in editor.result_text(result)
    assert _sent_version(editor) == 0 and editor.save_requests == []
    assert (tmp_path / "m.py").read_bytes() == b"def f():\n    return 1\n"
    editor.flush()  # eglot's idle timer
    read = await editor.call("read", {"path": "m.py"}, "c2")
    assert editor.result_text(read).startswith("def f():\n    return 2\n")  # once, not twice
    again = await editor.call("edit", _edit("m.py", "return 2", "return 3"), "c3")
    assert again["isError"] is False and _sent_version(editor) == 1  # contiguous
    editor.flush()
    assert editor.text("m.py") == "def f():\n    return 3\n"


def _user_types_during_apply(editor: FakeEditor, params: Any) -> None:
    editor.type("m.py", 0, 0, "# user\n")  # a keystroke lands before the edit: its version is stale


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ("vscode", "The editor did not apply the edit"),  # applied: false
        ("neovim", "applied but the buffer does not contain it"),  # applied: true, silently skipped
        ("eglot", "The editor refused the edit"),  # a JSON-RPC error
    ],
)
async def test_a_stale_edit_is_an_error_for_every_profile_and_the_retry_applies_once(
    make_editor, tmp_path: Path, profile: str, message: str
) -> None:
    editor = await _open(make_editor, tmp_path, profile, before_apply=_user_types_during_apply)
    result = await editor.call("edit", _edit("m.py", "return 1", "return 2"))
    assert result["isError"] is True and message in editor.result_text(result), editor.result_text(result)
    assert editor.text("m.py") == "# user\ndef f():\n    return 1\n"  # the user's text, no agent edit
    assert (tmp_path / "m.py").read_bytes() == b"def f():\n    return 1\n"  # nothing written instead

    editor.before_apply = None
    read = await editor.call("read", {"path": "m.py"}, "c2")
    assert editor.result_text(read).startswith("# user\n")
    retry = await editor.call("edit", _edit("m.py", "return 1", "return 2"), "c3")
    assert retry["isError"] is False, editor.result_text(retry)
    editor.flush()
    assert editor.text("m.py") == "# user\ndef f():\n    return 2\n"
    assert await wait_until(lambda: editor.text("m.py").count("return 2") == 1, timeout=1)


async def test_a_keystroke_in_neovims_debounce_window_is_kept_and_not_saved_with_the_edit(
    make_editor, tmp_path: Path
) -> None:
    def type_after_the_reply(editor: FakeEditor, params: Any) -> None:
        # 50 ms after this, inside the 150 ms before Neovim sends the edit's didChange
        asyncio.get_running_loop().call_later(0.05, editor.type, "m.py", 0, 0, "#")

    editor = await _open(make_editor, tmp_path, "neovim", before_apply=type_after_the_reply)
    result = await editor.call("edit", _edit("m.py", "return 1", "return 2"))
    assert result["isError"] is False, editor.result_text(result)
    assert editor.text("m.py") == "#def f():\n    return 2\n"  # both, the edit once
    assert (tmp_path / "m.py").read_bytes() == b"def f():\n    return 1\n"  # the keystroke is not saved
    assert "not saved" in editor.result_text(result).lower()
    read = await editor.call("read", {"path": "m.py"}, "c2")
    assert editor.result_text(read).startswith("#def f():\n    return 2\n")
