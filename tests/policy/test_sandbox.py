"""The defence in depth of issue 13: bubblewrap around auto-allowed commands (real ``bwrap``),
git with its config-driven programs off, the probe's failure reported, ``required`` asking."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pi_lsp.policy.protected_paths import ProtectedPaths
from pi_lsp.policy.sandbox import Sandbox, git_environment
from pi_lsp.policy.workspace_scope import WorkspaceScope
from tests.policy.test_approval_hook import Session, answering

SECRET = "SECRET_9d1e"


def _bwrap() -> str:
    path = shutil.which("bwrap")
    if path is None:
        message = "bwrap is not installed; CI installs it (apt-get install bubblewrap)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message + "; the sandbox tests are skipped on this machine")
    return path


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("alpha\n", encoding="utf-8")
    (ws / ".env").write_text(f"KEY={SECRET}\n", encoding="utf-8")
    (ws / "sub" / "id_rsa").write_text(f"{SECRET}\n", encoding="utf-8")
    return ws


def test_a_command_in_the_sandbox_cannot_write_read_secrets_see_processes_or_reach_the_network(tmp_path: Path) -> None:
    _bwrap()
    ws = _workspace(tmp_path)
    scope = WorkspaceScope(lambda: [ws])
    guards = ProtectedPaths()
    launch = Sandbox("auto").launch(
        git=False, roots=scope.roots(), cwd=ws, protected=lambda p: guards.match(Path(p), scope, p)
    )
    assert launch is not None and launch.prefix and launch.prefix[-1] == "--"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    script = (
        "cat a.txt; echo x > a.txt; echo y > new.txt; cat .env sub/id_rsa; "
        f"(exec 3<>/dev/tcp/127.0.0.1/{port}) && echo connected; "
        "echo t > /tmp/inside && cat /tmp/inside; "
        f"test -e /proc/{os.getpid()}/environ && echo 'sees the host processes'; exit 0"
    )
    done = subprocess.run([*launch.prefix, "/bin/bash", "-c", script], cwd=ws, capture_output=True, text=True, timeout=60)
    listener.close()
    assert done.stdout.startswith("alpha\n") and "t\n" in done.stdout, done
    assert SECRET not in done.stdout + done.stderr
    assert "connected" not in done.stdout
    assert "sees the host processes" not in done.stdout
    assert "Read-only file system" in done.stderr
    assert (ws / "a.txt").read_text() == "alpha\n" and not (ws / "new.txt").exists()
    assert not Path("/tmp/inside").exists()


async def test_auto_allowed_commands_run_sandboxed_through_the_policy(tmp_path: Path) -> None:
    _bwrap()
    session = Session(tmp_path, answering("Deny"))
    (session.cwd / ".env").write_text(f"KEY={SECRET}\n", encoding="utf-8")
    (session.cwd / "a.txt").write_text("alpha\n", encoding="utf-8")
    is_error, text = await session.call("bash", command="ls -la")
    assert not is_error and "a.txt" in text and session.requests == []
    # the sandbox covers .env with an empty device file, visible in the listing
    assert any(line.startswith("c") and line.endswith(" .env") for line in text.splitlines()), text


async def test_planted_git_config_programs_do_not_run_even_without_a_sandbox(tmp_path: Path) -> None:
    session = Session(tmp_path, answering("Deny"), sandbox="off")
    cwd = session.cwd
    marker = tmp_path / "pwned"
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=cwd, check=True)
    (cwd / "a.txt").write_text("alpha\n", encoding="utf-8")
    subprocess.run([*git, "add", "a.txt"], cwd=cwd, check=True)
    subprocess.run([*git, "commit", "-qm", "c"], cwd=cwd, check=True)
    (cwd / "a.txt").write_text("beta\n", encoding="utf-8")
    for key in ("core.fsmonitor", "core.pager", "diff.external"):
        subprocess.run(["git", "config", key, f"touch {marker}; false"], cwd=cwd, check=True)
    for command in ("git status", "git log --oneline", "git status --short"):
        is_error, text = await session.call("bash", command=command)
        assert not is_error, (command, text)
        assert not marker.exists(), command
    assert session.requests == []
    env = git_environment()
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and int(env["GIT_CONFIG_COUNT"]) >= 8


async def test_required_without_a_working_sandbox_asks_and_says_why(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    session = Session(tmp_path, answering("Deny"), sandbox="required")
    session.policy.sandbox._probe = lambda: (None, "bwrap is not installed")
    (session.cwd / "a.txt").write_text("alpha\n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="pi_lsp.policy.sandbox"):
        is_error, text = await session.call("bash", command="cat a.txt")
    assert is_error and "alpha" not in text
    assert len(session.requests) == 1
    assert "no sandbox is available (bwrap is not installed)" in session.requests[0].reason
    assert "bash sandbox unavailable: bwrap is not installed" in caplog.text
    status = session.policy.sandbox.status
    assert (status.available, status.reason) == (False, "bwrap is not installed")


async def test_auto_without_a_working_sandbox_still_judges_and_runs(tmp_path: Path) -> None:
    session = Session(tmp_path, answering("Deny"))
    session.policy.sandbox._probe = lambda: (None, "bwrap fails here")
    (session.cwd / "a.txt").write_text("alpha\n", encoding="utf-8")
    assert await session.call("bash", command="cat a.txt") == (False, "alpha\n")
    is_error, _ = await session.call("bash", command="cat .env")
    assert is_error and len(session.requests) == 1


async def test_what_was_judged_is_what_runs_even_if_a_glob_would_match_more_by_then(tmp_path: Path) -> None:
    """A file made between the judgement and the run (a parallel call) is not picked up by the
    glob: the judged argument vector runs as it is."""
    session = Session(tmp_path, answering("Deny"))
    (session.cwd / "a.txt").write_text("alpha\n", encoding="utf-8")

    async def plant(ctx, signal):  # runs after the policy's judgement, before the tool
        (session.cwd / "-n").write_text("", encoding="utf-8")  # would become an option of cat
        (session.cwd / "b.txt").write_text("beta\n", encoding="utf-8")

    session.pipeline.add_before_hook(plant)
    assert await session.call("bash", command="cat *") == (False, "alpha\n")
    assert await session.call("bash", command="cat *.txt 2>/dev/null") == (False, "alpha\nbeta\n")


def _zombie_children(pid: int) -> list[int]:
    kids = []
    for task in os.listdir(f"/proc/{pid}/task"):
        kids += [int(k) for k in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return [k for k in kids if Path(f"/proc/{k}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"]


def test_sandboxed_commands_leave_no_zombie_behind_as_calls_go_on(tmp_path: Path) -> None:
    # bwrap's own process inside the sandbox outlives the bwrap the tool started; pi-lsp, their
    # subreaper, reaps it (at the latest when the next call starts), so zombies never pile up
    _bwrap()
    ws = _workspace(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pi_lsp", "exec", "--cwd", str(ws)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for index in range(8):
            call = {"id": str(index), "name": "bash", "arguments": {"command": "ls"}}
            proc.stdin.write((json.dumps(call) + "\n").encode())
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
            assert answer["isError"] is False and "a.txt" in answer["content"][0]["text"], answer
        assert len(_zombie_children(proc.pid)) <= 1  # the last call's, reaped when the next starts
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        proc.kill()
        proc.wait()
