"""Signals and leftovers over real processes (issue 12, "Process lifetimes and signals").

The daemon (``python -m pi_lsp``, raw LSP frames) and ``pi-lsp exec`` each run a bash command that
leaves a background job, a daemonised grandchild (``setsid``, a new session) and a running
foreground ``sleep``; each sleep has a unique duration, its marker in ``argv``. Then the process is
ended by a signal: nothing with a marker may be left, no ``pi-lsp-*`` temp folder, no traceback.
After SIGKILL nothing can run, so the next start must remove the temp folder the killed one left
and end the processes its tools started.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest

from pi_lsp.tools.shell.processes import iter_processes
from tests.e2e.daemon_support import REPO, SERVER_COMMAND, server_env, server_tmp

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

BOUND = 30.0


def _markers() -> list[str]:
    stem = f"300.{secrets.randbelow(10**8):08d}"
    return [f"{stem}1", f"{stem}2", f"{stem}3"]


def _command(markers: list[str]) -> str:
    daemonised, background, foreground = markers
    return (
        f"(setsid sleep {daemonised} > /dev/null 2>&1 < /dev/null &); "
        f"sleep {background} > /dev/null 2>&1 & sleep {foreground}"
    )


def pids_with_argument(marker: str) -> list[int]:
    """Live (non-zombie) processes whose argv holds ``marker``."""
    found = []
    for info in iter_processes():
        try:
            args = Path(f"/proc/{info.pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args and info.state != "Z":
            found.append(info.pid)
    return found


def _wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + BOUND
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _kill_markers(markers: list[str]) -> None:
    for marker in markers:
        for pid in pids_with_argument(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _initialize(msg_id: int, root: Path) -> bytes:
    return _frame({"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": {
        "processId": None, "rootUri": root.as_uri(), "capabilities": {},
        # nobody reads the daemon's prompts in this test: a rule allows the command
        "initializationOptions": {"pi": {"approvals": {"rules": [{"tool": "*", "action": "allow"}]}}},
    }})


def _bash_call(msg_id: int, command: str) -> bytes:
    return _frame({"jsonrpc": "2.0", "id": msg_id, "method": "pi/executeToolCall", "params": {
        "toolCall": {"id": f"c{msg_id}", "name": "bash", "arguments": {"command": command}},
    }})


def _start(face: str, root: Path, tmpdir: Path, stderr: IO[bytes]) -> subprocess.Popen:
    argv = [*SERVER_COMMAND, "exec", "--cwd", str(root)] if face == "exec" else SERVER_COMMAND
    return subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr, cwd=REPO,
        env=server_env(TMPDIR=str(tmpdir)),
    )


def _send(proc: subprocess.Popen, data: bytes) -> None:
    assert proc.stdin is not None
    proc.stdin.write(data)
    proc.stdin.flush()


def _run_command(face: str, proc: subprocess.Popen, root: Path, command: str) -> None:
    if face == "exec":
        _send(proc, json.dumps({"id": "c1", "name": "bash", "arguments": {"command": command}}).encode() + b"\n")
    else:
        _send(proc, _initialize(0, root) + _bash_call(1, command))


def _session_folders(tmpdir: Path) -> list[Path]:
    return sorted(tmpdir.glob("pi-lsp-*"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
@pytest.mark.parametrize("face", ["daemon", "exec"])
def test_a_signal_ends_every_process_and_removes_the_temp_folder(
    face: str, signum: signal.Signals, tmp_path: Path
) -> None:
    tmpdir = server_tmp(tmp_path)
    markers = _markers()
    with open(tmp_path.parent / f"{tmp_path.name}-stderr", "w+b") as stderr:
        proc = _start(face, tmp_path, tmpdir, stderr)
        try:
            _run_command(face, proc, tmp_path, _command(markers))
            _wait_for(lambda: all(pids_with_argument(m) for m in markers), "the three sleeps")
            assert len(_session_folders(tmpdir)) == 1
            os.kill(proc.pid, signum)
            assert proc.wait(timeout=BOUND) == 128 + signum
            left = {m: pids_with_argument(m) for m in markers}
            assert not any(left.values()), f"left running: {left}"
            assert _session_folders(tmpdir) == []
            stderr.seek(0)
            assert b"Traceback" not in stderr.read()
        finally:
            proc.kill()
            proc.wait()
            _kill_markers(markers)


@pytest.mark.parametrize("face", ["daemon", "exec"])
def test_the_next_start_cleans_up_after_a_killed_process(face: str, tmp_path: Path) -> None:
    tmpdir = server_tmp(tmp_path)
    markers = _markers()
    stranger = tmpdir / "pi-lsp-without-owner-record"  # an older pi-lsp's, or one being created
    stranger.mkdir()
    first = _start(face, tmp_path, tmpdir, subprocess.DEVNULL)  # type: ignore[arg-type]
    second = None
    try:
        _run_command(face, first, tmp_path, _command(markers))
        _wait_for(lambda: all(pids_with_argument(m) for m in markers), "the three sleeps")
        (killed_folder,) = [f for f in _session_folders(tmpdir) if f != stranger]
        first.kill()
        first.wait()
        assert killed_folder.exists()  # SIGKILL: nothing could run
        assert all(pids_with_argument(m) for m in markers)
        second = _start(face, tmp_path, tmpdir, subprocess.DEVNULL)  # type: ignore[arg-type]
        _run_command(face, second, tmp_path, "echo second")
        _wait_for(lambda: not killed_folder.exists(), "the stale folder to go")
        _wait_for(lambda: len(_session_folders(tmpdir)) == 2, "the second's own folder")
        live = [f for f in _session_folders(tmpdir) if f != stranger]
        assert len(live) == 1 and live[0] != killed_folder and second.poll() is None
        assert stranger.exists()  # no owner record: never judged, never removed
        _wait_for(lambda: not any(pids_with_argument(m) for m in markers), "the killed session's processes to end")
    finally:
        first.kill()
        first.wait()
        if second is not None:
            second.kill()
            second.wait()
        _kill_markers(markers)


def test_a_second_initialize_ends_the_first_sessions_processes_and_folder(tmp_path: Path) -> None:
    tmpdir = server_tmp(tmp_path)
    markers = _markers()
    proc = _start("daemon", tmp_path, tmpdir, subprocess.DEVNULL)  # type: ignore[arg-type]
    try:
        _run_command("daemon", proc, tmp_path, _command(markers))
        _wait_for(lambda: all(pids_with_argument(m) for m in markers), "the three sleeps")
        (first_folder,) = _session_folders(tmpdir)
        _send(proc, _initialize(2, tmp_path))
        _wait_for(lambda: not first_folder.exists(), "the first session's folder to go")
        _wait_for(lambda: not any(pids_with_argument(m) for m in markers), "the first session's processes to end")
        _wait_for(lambda: len(_session_folders(tmpdir)) == 1, "the second session's folder")
        assert proc.poll() is None  # the daemon goes on serving the new session
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=BOUND) in (0, 1)
        assert _session_folders(tmpdir) == []
    finally:
        proc.kill()
        proc.wait()
        _kill_markers(markers)
