"""Fixtures of the policy tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.policy.policy_support import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """A fresh on-disk workspace (see :class:`Workspace`)."""
    return Workspace(tmp_path)
