"""Shared pytest fixtures (keep this file tiny: fixtures only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.peer import peer_dir


@pytest.fixture(scope="session")
def peer() -> Path:
    """A directory holding the real Pi peer with its node_modules (skips loudly when unavailable)."""
    return peer_dir()
