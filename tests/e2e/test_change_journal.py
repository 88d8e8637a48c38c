"""Review and rewind through the daemon (issue 18): pi/changes, pi/revertChanges, pi/keepChanges.

A real ``pi-lsp`` subprocess driven by FakeEditor; the calls come over ``pi/executeToolCall`` (the
session ``external``, turn 0). Reverts of files the editor holds arrive as ``workspace/applyEdit``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

EXTERNAL = "external"


async def _changes(editor: Any, **params: Any) -> dict[str, Any]:
    return await editor.request("pi/changes", {"sessionId": EXTERNAL, **params})


def _by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {Path(entry["path"]).name: entry for entry in result["files"]}


async def _edit(editor: Any, path: str, old: str, new: str, call_id: str) -> None:
    result = await editor.call("edit", {"path": path, "edits": [{"oldText": old, "newText": new}]}, call_id)
    assert not result["isError"], editor.result_text(result)


async def test_a_turn_of_edits_writes_and_bash_is_one_change_set(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text("a = 1\nb = 2\nc = 3\n")
    (tmp_path / "dirty.py").write_text("x = 1\n")
    (tmp_path / "closed.py").write_text("keep\nold\n")
    (tmp_path / "fmt.py").write_text("y=1\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    editor = await make_editor(tmp_path)
    editor.open("clean.py")
    editor.open("dirty.py")
    editor.type("dirty.py", 0, 0, "# user\n")
    await _edit(editor, "clean.py", "a = 1", "a = 10", "c1")
    await _edit(editor, "dirty.py", "x = 1", "x = 2", "c2")
    await _edit(editor, "closed.py", "old", "new", "c3")
    written = await editor.call("write", {"path": "made.txt", "content": "made by write\n"}, "c4")
    assert not written["isError"]
    bash = await editor.call("bash", {"command": (
        "printf 'y = 1\\n' > fmt.py && echo generated > gen.txt && rm gone.txt"
        " && printf '\\x00\\xff' > blob.bin"
    )}, "c5")
    assert not bash["isError"], editor.result_text(bash)

    files = _by_name(await _changes(editor))
    assert files["clean.py"]["state"] == "modified" and files["clean.py"]["toolCalls"][0]["toolName"] == "edit"
    [hunk] = files["clean.py"]["hunks"]
    assert (hunk["oldText"], hunk["newText"], hunk["status"]) == ("a = 1\n", "a = 10\n", "applied")
    assert files["dirty.py"]["hunks"][0]["newText"] == "x = 2\n"
    assert files["closed.py"]["hunks"][0]["oldText"] == "old\n"
    assert files["made.txt"]["state"] == "created" and files["made.txt"]["toolCalls"][0]["toolName"] == "write"
    assert files["fmt.py"]["toolCalls"][0]["toolName"] == "bash"
    assert files["fmt.py"]["hunks"][0]["newText"] == "y = 1\n"
    assert files["gen.txt"]["state"] == "created" and files["gone.txt"]["state"] == "deleted"
    assert files["blob.bin"]["binary"] is True and files["blob.bin"]["hunks"] == []


async def test_revert_one_hunk_through_the_editor_then_a_file_then_the_rest(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "two.py").write_text("one\ntwo\nthree\nfour\nfive\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    editor = await make_editor(tmp_path)
    editor.open("two.py")
    await _edit(editor, "two.py", "one", "ONE", "c1")
    await _edit(editor, "two.py", "five", "FIVE", "c2")
    await editor.call("write", {"path": "made.txt", "content": "x\n"}, "c3")
    await editor.call("bash", {"command": "rm gone.txt"}, "c4")
    hunks = _by_name(await _changes(editor))["two.py"]["hunks"]
    assert [h["newText"] for h in hunks] == ["ONE\n", "FIVE\n"]
    applies = len(editor.apply_edits)

    report = await editor.request("pi/revertChanges", {"sessionId": EXTERNAL, "hunks": [hunks[1]["id"]]})
    assert report["reverted"] == [hunks[1]["id"]] and report["conflicts"] == []
    assert editor.text("two.py") == "ONE\ntwo\nthree\nfour\nfive\n"
    assert len(editor.apply_edits) == applies + 1  # one applyEdit: one undo step in the editor
    statuses = [h["status"] for h in _by_name(await _changes(editor))["two.py"]["hunks"]]
    assert statuses == ["applied", "reverted"]

    report = await editor.request("pi/revertChanges", {"sessionId": EXTERNAL, "files": [str(tmp_path / "made.txt")]})
    assert report["files"] == [{"path": str(tmp_path / "made.txt"), "action": "deleted"}]
    assert not (tmp_path / "made.txt").exists()

    report = await editor.request("pi/revertChanges", {"sessionId": EXTERNAL})
    assert (tmp_path / "gone.txt").read_text() == "bye\n"
    assert editor.text("two.py") == "one\ntwo\nthree\nfour\nfive\n"
    assert report["conflicts"] == []


async def test_a_revert_undone_in_the_editor_makes_the_hunk_applied_again(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("alpha\nbeta\n")
    editor = await make_editor(tmp_path)
    editor.open("a.py")
    await _edit(editor, "a.py", "beta", "BETA", "c1")
    [hunk] = _by_name(await _changes(editor))["a.py"]["hunks"]
    await editor.request("pi/revertChanges", {"sessionId": EXTERNAL, "hunks": [hunk["id"]]})
    assert [h["status"] for h in _by_name(await _changes(editor))["a.py"]["hunks"]] == ["reverted"]
    editor.type("a.py", 6, 10, "BETA")  # the editor's undo of the revert
    [again] = _by_name(await _changes(editor))["a.py"]["hunks"]
    assert (again["id"], again["status"], again["currentStart"]) == (hunk["id"], "applied", 1)
    report = await editor.request("pi/revertChanges", {"sessionId": EXTERNAL, "files": [str(tmp_path / "a.py")]})
    assert report["reverted"] == [hunk["id"]] and editor.text("a.py") == "alpha\nbeta\n"


async def test_text_the_user_changed_after_the_agent_is_never_overwritten(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("alpha\nbeta\ngamma\ndelta\n")
    editor = await make_editor(tmp_path)
    editor.open("a.py")
    await _edit(editor, "a.py", "alpha", "ALPHA", "c1")
    await _edit(editor, "a.py", "delta", "DELTA", "c2")
    text = editor.text("a.py")
    editor.type("a.py", text.index("ALPHA"), text.index("ALPHA") + 5, "ALPHA-user")  # the user edits hunk 1
    editor.type("a.py", 0, 0, "# header\n")  # and adds a line above everything
    report = await editor.request("pi/revertChanges", {"sessionId": EXTERNAL})
    assert [c["reason"] for c in report["conflicts"]] == ["changed since the agent's edit; left as it is"]
    assert editor.text("a.py") == "# header\nALPHA-user\nbeta\ngamma\ndelta\n"
    files = _by_name(await _changes(editor))
    assert [h["status"] for h in files["a.py"]["hunks"]] == ["changed", "reverted"]


async def test_kept_hunks_are_marked(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text("k = 1\n")
    editor = await make_editor(tmp_path)
    await _edit(editor, "k.py", "k = 1", "k = 2", "c1")
    [hunk] = _by_name(await _changes(editor))["k.py"]["hunks"]
    kept = await editor.request("pi/keepChanges", {"sessionId": EXTERNAL, "hunks": [hunk["id"]]})
    assert kept == {"kept": [hunk["id"]]}
    assert _by_name(await _changes(editor))["k.py"]["hunks"][0]["status"] == "kept"


async def test_the_journal_survives_a_daemon_restart(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "r.py").write_text("r = 1\n")
    first = await make_editor(tmp_path)
    await _edit(first, "r.py", "r = 1", "r = 2", "c1")
    await first.stop()
    second = await make_editor(tmp_path)
    files = _by_name(await _changes(second))
    assert files["r.py"]["hunks"][0]["status"] == "applied"
    report = await second.request("pi/revertChanges", {"sessionId": EXTERNAL, "files": [str(tmp_path / "r.py")]})
    assert report["conflicts"] == [] and (tmp_path / "r.py").read_text() == "r = 1\n"


async def test_a_file_too_large_to_keep_is_reported_not_restorable(make_editor: Any, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 5000 + "\n")
    editor = await make_editor(tmp_path, initialization_options={"pi": {"changes": {"maxFileBytes": 1000}}})
    result = await editor.call("bash", {"command": "echo more >> big.txt"}, "c1")
    assert not result["isError"]
    entry = _by_name(await _changes(editor))["big.txt"]
    assert entry["restorable"] is False and entry["hunks"] == []
    assert entry["binary"] is False  # a text file whose contents were not kept is not called binary
    report = await editor.request("pi/revertChanges", {"sessionId": EXTERNAL})
    assert "not restorable" in report["conflicts"][0]["reason"]
    assert (tmp_path / "big.txt").read_text().endswith("more\n")


async def test_bad_params_are_invalid_params(make_editor: Any, tmp_path: Path) -> None:
    from pygls.exceptions import JsonRpcException

    editor = await make_editor(tmp_path)
    for params in ({}, {"sessionId": ""}, {"sessionId": "s", "turn": -1}, {"sessionId": "s", "hunks": [1]}):
        try:
            await editor.request("pi/revertChanges", params)
        except JsonRpcException as exc:
            assert exc.code == -32602
        else:
            raise AssertionError(f"{params} accepted")


async def test_a_tracked_file_bash_changed_is_restored_from_git(make_editor: Any, tmp_path: Path) -> None:
    # a clean tracked file is not copied before bash runs: its content comes back from the repository
    (tmp_path / "lib.py").write_bytes(b"def f():\r\n    return 1\n")
    (tmp_path / "old.py").write_bytes(b"old\n")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "lib.py", "old.py"], ["commit", "-qm", "init"]):
        subprocess.run([*git, *args], cwd=tmp_path, check=True, capture_output=True)
    for name in ("lib.py", "old.py"):  # not "racily clean" (written in the index's own second)
        os.utime(tmp_path / name, ns=(1_600_000_000_000_000_000,) * 2)
    subprocess.run([*git, "update-index", "--refresh"], cwd=tmp_path, check=True, capture_output=True)
    editor = await make_editor(tmp_path)
    result = await editor.call("bash", {"command": "printf 'def f():\\n    return 2\\n' > lib.py && rm old.py"}, "c1")
    assert not result["isError"], editor.result_text(result)
    files = _by_name(await _changes(editor))
    [hunk] = files["lib.py"]["hunks"]
    assert (hunk["oldText"], hunk["newText"]) == ("def f():\r\n    return 1\n", "def f():\n    return 2\n")
    assert files["old.py"]["state"] == "deleted" and files["old.py"]["restorable"] is True
    report = await editor.request("pi/revertChanges", {"sessionId": EXTERNAL})
    assert report["conflicts"] == []
    assert (tmp_path / "lib.py").read_bytes() == b"def f():\r\n    return 1\n"
    assert (tmp_path / "old.py").read_bytes() == b"old\n"
