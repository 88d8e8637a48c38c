"""Issue 13, through the daemon: a real ``python -m pi_lsp`` with default settings, FakeEditor
answering **Deny** to every prompt. Each kind of hole the issue found is tried; for each command:
nothing ran (no marker file), nothing was written (``.git/config`` and the workspace unchanged),
no secret is in any result, and a prompt was shown.

The workspace is a git repository whose first commit holds ``.env`` (so history holds the
secret), with ``a.txt``, a script ``run.sh`` that would leave a marker if it ran, and the
symlinks ``h -> .git/hooks`` and ``r -> /usr``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pi_lsp.demo.fake_editor import FakeEditor
from tests.e2e.daemon_support import server_env, server_tmp

SECRET = "SECRET_TOKEN_5f2c"
MARKER = "ran.marker"


def _workspace(root: Path) -> dict[str, bytes]:
    """Build the workspace; return the bytes of every regular file to compare after."""
    (root / ".env").write_text(f"API_KEY={SECRET}\n", encoding="utf-8")
    (root / "a.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    (root / "run.sh").write_text(f"#!/bin/sh\ntouch {root / MARKER}\ncat {root / '.env'}\n", encoding="utf-8")
    os.chmod(root / "run.sh", 0o755)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-f", ".env", "a.txt", "run.sh"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=root, check=True)
    os.symlink(root / ".git" / "hooks", root / "h")
    os.symlink("/usr", root / "r")
    return _snapshot(root)


def _snapshot(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if not path.is_symlink() and path.is_file() and "/.git/objects/" not in str(path) and not str(path).endswith(".git/index"):
                files[str(path.relative_to(root))] = path.read_bytes()
    return files


async def _assert_refused(
    editor: FakeEditor, root: Path, before: dict[str, bytes], tool: str, args: dict[str, object], *, asks: bool = True
) -> None:
    """``tool`` with ``args`` is asked about (``asks``; else refused outright), declined, and has no effect."""
    asked = len(editor.message_requests)
    result = await editor.call(tool, args)
    text = editor.result_text(result)
    shown = f"{tool} {args}"
    assert result["isError"] is True, shown
    if asks:
        assert len(editor.message_requests) == asked + 1, f"no prompt for {shown}: {text}"
        assert "The user declined this tool call" in text, shown
    else:
        assert len(editor.message_requests) == asked and "protected path" in text, shown
    assert SECRET not in text, shown
    assert not (root / MARKER).exists(), shown
    assert _snapshot(root) == before, f"{shown} changed files"


@pytest.fixture
async def denied(make_editor, tmp_path: Path):
    before = _workspace(tmp_path)
    editor: FakeEditor = await make_editor(message_answer="Deny")
    return editor, tmp_path, before


CODE_EXECUTION = [
    "rg -e -- --pre ./run.sh alpha",  # an option value of -- used to end the option check
    "rg -T -- --pre=./run.sh alpha a.txt",
    "rg --pre ./run.sh alpha",
    "git grep -e -- -O./run.sh alpha",
    "git grep --open-files-in-pager=./run.sh alpha",
    "sort -k -- -o .git/config a.txt",
    "sort -uo.git/config a.txt",
    "sort -k -- -o out.txt a.txt",
    "sort --compress-program=./run.sh a.txt",
    "git -c core.pager=./run.sh log",
    "git log -c core.fsmonitor=./run.sh",
    "find . -exec ./run.sh ;",
    "find . -name x -fprint .git/config",
    "tree -o .git/config",
    "echo ok > a.txt",
]
"""Commands that would run a program or write a file (issue 13's first kind)."""

SECRETS_AND_PATHS = [
    "grep -r API_KEY .",
    "grep -rn API_KEY",
    "rg --hidden API_KEY",
    "rg -uu API_KEY",
    "file -f .env",
    "wc --files0-from=.env",
    "du --files0-from=.env",
    "find . -files0-from .env",
    "cat .[^x]nv",
    "cat .[[:alpha:]]nv",
    "cat .e*",
    "cat .env",
    "cat ./h/../../.env",
    "git log -p",
    "git show HEAD",
    "git show HEAD:.env",
    "git diff HEAD~0 -- .env",
    "git grep API_KEY",
    "grep -f.env a.txt",
    "grep --file=.env a.txt",
    "head -n 1 -- .env",
    "cat h/../config",
    "cat r/../etc/passwd",
    "cat r/../etc/hostname",
    "diff -r . /tmp",
]
"""Commands that would print a protected file or a file outside the workspace (the second and
third kinds: recursive and history reads, error texts, bash-only glob syntax, glued values,
symlinks before ``..``)."""


async def test_code_execution_and_writes_through_allowed_commands_ask(denied) -> None:
    editor, root, before = denied
    for command in CODE_EXECUTION:  # one daemon for all: each starts in about two seconds
        await _assert_refused(editor, root, before, "bash", {"command": command})


async def test_secrets_and_paths_outside_ask(denied) -> None:
    editor, root, before = denied
    for command in SECRETS_AND_PATHS:
        await _assert_refused(editor, root, before, "bash", {"command": command})


async def test_git_status_runs_without_the_planted_fsmonitor_or_pager(make_editor, tmp_path: Path) -> None:
    """A repository config that names programs (planted before pi-lsp runs) is not obeyed by an
    auto-allowed git command."""
    _workspace(tmp_path)
    for key in ("core.fsmonitor", "core.pager", "diff.external"):
        subprocess.run(["git", "config", key, f"{tmp_path / 'run.sh'}"], cwd=tmp_path, check=True)
    editor: FakeEditor = await make_editor(message_answer="Deny")
    for command in ("git status", "git status --short", "git log --oneline"):
        result = await editor.call("bash", {"command": command})
        text = editor.result_text(result)
        assert result["isError"] is False, (command, text)
        assert SECRET not in text and not (tmp_path / MARKER).exists(), command
    assert editor.message_requests == []


async def test_write_cannot_make_a_folder_a_git_repository(denied) -> None:
    editor, root, before = denied
    for path in ("HEAD", "sub/HEAD"):
        await _assert_refused(editor, root, before, "write", {"path": path, "content": "ref: refs/heads/main\n"}, asks=False)
    (root / "bare").mkdir()
    (root / "bare" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    before = _snapshot(root)
    for path in ("bare/config", "bare/objects/info/x", "bare/refs/heads/main", "bare/hooks/pre-commit"):
        result = await editor.call("write", {"path": path, "content": "[diff]\n\texternal = ./run.sh\n"})
        assert result["isError"] is True and "protected path" in editor.result_text(result), path
    assert _snapshot(root) == before
    result = await editor.call("write", {"path": "notes/config", "content": "fine\n"})  # no HEAD beside it
    assert result["isError"] is False


async def test_the_grep_tool_withholds_protected_files(make_editor, tmp_path: Path) -> None:
    _workspace(tmp_path)
    tools = ["read", "bash", "edit", "write", "grep", "find", "ls"]  # grep is not active by default
    editor: FakeEditor = await make_editor(message_answer="Deny", initialization_options={"pi": {"activeTools": tools}})
    result = await editor.call("grep", {"pattern": "API_KEY|alpha"})
    text = editor.result_text(result)
    assert result["isError"] is False and SECRET not in text, text
    assert "a.txt:1: alpha" in text
    assert "1 match in a protected file withheld" in text and "asks the user for approval" in text
    assert editor.message_requests == []
    result = await editor.call("grep", {"pattern": "API_KEY", "path": ".env"})  # named: asked
    assert result["isError"] is True and SECRET not in editor.result_text(result)
    assert len(editor.message_requests) == 1


async def test_what_stays_allowed_runs_sandboxed_without_a_prompt(denied) -> None:
    editor, root, _before = denied
    for command, expected in [
        ("cat a.txt", "alpha\nbeta\n"),
        ("grep -n beta a.txt", "2:beta\n"),
        ("rg -n beta", "a.txt:2:beta\n"),
        ("head -n1 -- a.txt", "alpha\n"),
        ("ls -a 2>/dev/null", None),
    ]:
        result = await editor.call("bash", {"command": command})
        text = editor.result_text(result)
        assert result["isError"] is False, (command, text)
        if expected is not None:
            assert text == expected, command
        assert SECRET not in text
    assert editor.message_requests == []


async def test_pi_health_reports_the_sandbox(make_editor) -> None:
    editor: FakeEditor = await make_editor()
    health = await editor.request("pi/health", {})
    sandbox = health["sandbox"]
    assert sandbox["mode"] == "auto"
    if shutil.which("bwrap") is not None:
        assert sandbox["available"] is True and sandbox["tool"] == shutil.which("bwrap")
    else:
        assert sandbox["available"] is False and "bwrap is not installed" in sandbox["reason"]


async def test_required_without_bwrap_warns_once_and_every_command_asks(tmp_path: Path) -> None:
    """``bash.sandbox: required`` with no bwrap on PATH: the user is told, and a command that
    would be auto-allowed asks (here Deny: it does not run)."""
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    bin_dir = tmp_path.parent / f"{tmp_path.name}-bin"
    bin_dir.mkdir()
    os.symlink(shutil.which("cat"), bin_dir / "cat")
    env = server_env(TMPDIR=str(server_tmp(tmp_path)), PATH=str(bin_dir))
    options = {"pi": {"bash": {"sandbox": "required"}}}
    async with FakeEditor(tmp_path, env=env, message_answer="Deny", initialization_options=options) as editor:
        health = await editor.request("pi/health", {})
        assert health["sandbox"]["available"] is False and "bwrap is not installed" in health["sandbox"]["reason"]
        assert [m for m in editor.shown_messages if "no bash sandbox" in m and "every bash command asks" in m]
        result = await editor.call("bash", {"command": "cat a.txt"})
        assert result["isError"] is True and "alpha" not in editor.result_text(result)
        assert len(editor.message_requests) == 1 and "no sandbox is available" in editor.message_requests[0]
