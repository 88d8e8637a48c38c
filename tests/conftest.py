"""Shared pytest fixtures (keep this file tiny: fixtures only)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.peer import peer_dir


def pytest_configure(config: pytest.Config) -> None:
    """Every daemon the suite starts announces its private socket in a runtime directory of this
    run (mode 0700), never in the user's own, so tests and a user's editors never meet."""
    os.environ["PI_LSP_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="pi-lsp-test-runtime-")


@pytest.fixture(scope="session")
def peer() -> Path:
    """A directory holding the real Pi peer with its node_modules (skips loudly when unavailable)."""
    return peer_dir()
