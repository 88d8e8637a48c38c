"""The real language server the knowledge tests give FakeEditor: the venv's ``pylsp``
(``python-lsp-server[pyflakes]``, in the ``test`` extra). Missing: skipped loudly, failed under CI=true."""

from __future__ import annotations

import os

import pytest

from pi_lsp.demo.editor_language_server import pylsp_command

FAST_KNOWLEDGE = {
    "languageServer": {"timeoutSeconds": 30},
    "diagnostics": {"settleSeconds": 30, "quietSeconds": 0.3},
    "edit": {"applyTimeoutSeconds": 10, "verifyTimeoutSeconds": 5},
}
"""Settings for these tests: generous upper bounds (a loaded 2-core machine), never waited out
when things work (the diagnostics wait ends once the server's report went quiet)."""


def require_pylsp() -> list[str]:
    """The ``pylsp`` command, or skip (fail under CI=true)."""
    command = pylsp_command()
    if command is None:
        message = "pylsp is not installed (pip install 'python-lsp-server[pyflakes]', in the test extra)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + " (CI=true: a missing part fails)")
        pytest.skip(message + "; the editor-knowledge tests are skipped on this machine")
    return command
