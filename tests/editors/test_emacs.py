"""pi-lsp.el in real Emacs against the real daemon and ``pi-lsp replay`` (issues 7 and 15).

- ``emacs --batch``: pi-lsp.el's own jsonrpc connection (no eglot) syncs every buffer of the
  project whatever its mode: an unsaved CHANGELOG.md in text-mode gets the agent's line next to
  the user's text and stays unsaved; greet.py (python-mode) is edited, saved, and undone one edit
  at a time; a file no buffer visits is visited, edited and saved; the transcript shows readable
  tool lines, diffs, the live tail of a command, expansion. Bounded by ``timeout``; stdin is
  /dev/null so a stray prompt fails instead of hanging.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.editors.editor_support import (
    EMACS_DIR,
    SESSIONS,
    Replay,
    assert_passed,
    editor_env,
    make_shim,
    require_program,
    run_editor,
)

GREET = 'def greet():\n    return "hi"\n\n\ndef bye():\n    return "bye"\n'
CHANGELOG = "# Changelog\n\n## 0.1.0\n- first release\n"


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "greet.py").write_text(GREET, encoding="utf-8")
    (ws / "CHANGELOG.md").write_text(CHANGELOG, encoding="utf-8")
    (ws / "closed.txt").write_text("first\nsecond\n", encoding="utf-8")
    return ws


def test_every_buffer_synced_edits_land_in_buffers(tmp_path: Path) -> None:
    emacs = require_program("emacs", "emacs-nox")
    ws = _workspace(tmp_path)
    result = tmp_path / "result.json"
    make_shim(tmp_path / "bin")
    replay = Replay(SESSIONS / "emacs_edits.jsonl")
    started = time.monotonic()
    try:
        env = editor_env(tmp_path, shim_dir=tmp_path / "bin", PI_LSP_EMACS_DIR=str(EMACS_DIR),
                         PI_TEST_URL=replay.url, PI_TEST_RESULT=str(result))
        rc, data, output = run_editor(
            [emacs, "--batch", "-l", str(EMACS_DIR / "tests" / "pi-lsp-test.el")], cwd=ws, env=env, result=result,
        )
    finally:
        replay.stop()
    assert_passed(rc, data, output, replay)
    assert (ws / "greet.py").read_text(encoding="utf-8").endswith('return "ciao"\n')
    assert "- my unsaved note" in (ws / "CHANGELOG.md").read_text(encoding="utf-8")
    assert not [line for line in replay.stderr if "turn" in line], replay.stderr
    print(f"emacs batch scenario: {time.monotonic() - started:.1f} s")
