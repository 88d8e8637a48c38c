"""Stock eglot on Emacs 28 (the distro's Emacs) against the real daemon, when a command's reply and
the ``workspace/applyEdit`` after it reach Emacs in one read (issue 21).

Emacs 28's jsonrpc.el leaves the messages read together with the reply to a synchronous request
unhandled until more output arrives (:mod:`pi_lsp.daemon.read_nudge`); the scenario
(``plain/eglot_stalled_read.el``) makes that happen every time, checks that the applyEdit was left
unhandled, then that pi-lsp's ``$/pi/nudge`` gets the edit applied long before the edit's timeout.
Under ``CI=true`` a missing Emacs fails instead of skipping.
"""

from __future__ import annotations

from pathlib import Path

from tests.editors.editor_support import assert_passed, editor_env, run_editor
from tests.editors.test_plain_lsp import HERE, eglot_setup


def test_eglot_applies_an_edit_that_arrived_with_a_reply(tmp_path: Path) -> None:
    emacs, ws, result = eglot_setup(tmp_path)
    env = editor_env(tmp_path, shim_dir=tmp_path / "bin", PI_TEST_RESULT=str(result))
    rc, data, output = run_editor([emacs, "--batch", "-l", str(HERE / "eglot_stalled_read.el")], cwd=ws, env=env, result=result)
    assert_passed(rc, data, output)
