"""pi-lsp.el with eglot in real ``emacs --batch`` against the real daemon and ``pi-lsp replay``
(issue 7): the prompt round trip through eglot, the buffer changed and saved, a closed file
edited on disk, ``undo`` reverting one agent edit. Bounded by ``timeout``; stdin is /dev/null
so a stray prompt fails instead of hanging."""

from __future__ import annotations

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


def test_prompt_round_trip_through_eglot(tmp_path: Path) -> None:
    emacs = require_program("emacs", "emacs-nox elpa-eglot")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "greet.py").write_text('def greet():\n    return "hi"\n\n\ndef bye():\n    return "bye"\n', encoding="utf-8")
    (ws / "closed.txt").write_text("first\nsecond\n", encoding="utf-8")
    result = tmp_path / "result.json"
    make_shim(tmp_path / "bin")
    replay = Replay(SESSIONS / "emacs_edits.jsonl")
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
    assert not [line for line in replay.stderr if "turn" in line], replay.stderr
