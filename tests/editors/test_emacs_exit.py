"""A terminal Emacs with pi-lsp running ends when its terminal goes or it gets SIGTERM.

``emacs -nw`` (pi-lsp.el loaded, pi-lsp started for the project) is the program of a private tmux
server, as in a terminal window or an ssh session. Closing the terminal (the tmux server is
killed: the tty hangs up, Emacs gets SIGHUP) or ``kill`` (SIGTERM) must end Emacs and the pi-lsp
server. Emacs 28 runs ``kill-emacs-hook`` inside the signal handler with every signal blocked,
SIGCHLD included, so it never learns that the server ended; ``pi-lsp-stop`` used to wait on all
processes for that and spun forever (an orphan Emacs at full CPU that only ``kill -9`` ended).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.editors.editor_support import EMACS_DIR, editor_env, make_shim
from tests.editors.test_emacs import Tmux, _require, _workspace

EXIT_BOUND_SECONDS = 30
"""How long Emacs and the server may take to end: a failure bound, not a speed target (a healthy
exit takes well under a second; the old code never ended)."""


def _gone(pid: int) -> bool:
    """Whether process ``pid`` ended (no such process, or a zombie nobody reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    """Poll until every pid of ``pids`` is gone or ``seconds`` passed; the ones still running."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not all(map(_gone, pids)):
        time.sleep(0.1)
    return [pid for pid in pids if not _gone(pid)]


@pytest.mark.parametrize("how", ["terminal-closed", "sigterm"])
def test_emacs_with_a_running_server_exits_when_its_terminal_goes(tmp_path: Path, how: str) -> None:
    """After the terminal closes (SIGHUP) or a plain ``kill``, Emacs and its pi-lsp both end within
    the bound; the control: Emacs was up, its server too, just before."""
    emacs = _require("emacs", "emacs-nox")
    ws = _workspace(tmp_path, {"notes.txt": "notes\n"})
    make_shim(tmp_path / "bin")
    result = tmp_path / "result.json"
    pid_file = Path(str(result) + ".pid")
    env = editor_env(tmp_path, shim_dir=tmp_path / "bin", PI_LSP_EMACS_DIR=str(EMACS_DIR), PI_TEST_RESULT=str(result))
    # exec'd straight from the tmux shell: Emacs owns the terminal, as in a terminal window
    tty = Tmux(tmp_path, [emacs, "-nw", "-Q", "-l", str(EMACS_DIR / "tests" / "pi-lsp-exit-test.el")], cwd=ws, env=env)
    pids: list[int] = []
    started = time.monotonic()
    try:
        panes = subprocess.run([tty.tmux, "-S", tty.socket, "list-panes", "-t", "pi", "-F", "#{pane_pid}"],
                               capture_output=True, text=True, timeout=30, check=True)
        pids.append(int(panes.stdout.split()[0]))
        tty.wait_for(lambda s: "pi-lsp started" in s and pid_file.exists(), "pi-lsp started")
        pids.append(int(pid_file.read_text()))
        assert not any(map(_gone, pids)), "Emacs and the server both run before the terminal goes"
        if how == "terminal-closed":
            tty.close()
        else:
            os.kill(pids[0], signal.SIGTERM)
        left = _wait_gone(pids, EXIT_BOUND_SECONDS)
        names = dict(zip(pids, ["emacs", "pi-lsp"]))
        assert not left, f"still running {EXIT_BOUND_SECONDS} s after {how}: {[names[pid] for pid in left]}"
        print(f"emacs exit on {how}: {time.monotonic() - started:.1f} s in all")
    finally:
        tty.close()
        for pid in pids:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
