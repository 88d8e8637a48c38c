"""Shared pytest fixtures (keep this file tiny: fixtures only)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.peer import peer_dir


_MADE: list[str] = []
"""The folders this run made (removed when it ends)."""


def pytest_configure(config: pytest.Config) -> None:
    """Every daemon the suite starts announces its private socket in a runtime directory of this
    run (mode 0700), never in the user's own, so tests and a user's editors never meet."""
    os.environ["PI_LSP_RUNTIME_DIR"] = runtime = tempfile.mkdtemp(prefix="pi-lsp-test-runtime-")
    _MADE.append(runtime)
    if "PI_LSP_SESSIONS_DIR" not in os.environ:  # journals of the suite's daemons: not the user's data folder
        os.environ["PI_LSP_SESSIONS_DIR"] = sessions = tempfile.mkdtemp(prefix="pi-lsp-test-sessions-")
        _MADE.append(sessions)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove this run's folders (they held up to hundreds of MB of change-journal blobs each)."""
    for folder in _MADE:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def peer() -> Path:
    """A directory holding the real Pi peer with its node_modules (skips loudly when unavailable)."""
    return peer_dir()
