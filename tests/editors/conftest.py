"""Fixtures of the editor tests (fixtures only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.vscode_support import build_vsix


@pytest.fixture(scope="session")
def vsix() -> Path:
    """The VS Code extension built and packaged once per session; the path of ``pi-lsp.vsix``."""
    return build_vsix()
