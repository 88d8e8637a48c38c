"""A missing peer fails the run under ``CI=true`` and skips loudly elsewhere (issue 12)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.peer import REPO

PROBE = '''
from tests.peer import peer_dir

def test_needs_the_peer():
    peer_dir()
'''


@pytest.mark.parametrize(("ci", "outcome"), [("true", "1 failed"), ("", "1 skipped")])
def test_a_missing_peer_fails_in_ci_and_skips_loudly_elsewhere(tmp_path: Path, ci: str, outcome: str) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "CI": ci, "PI_LSP_PEER_DIR": str(tmp_path / "nowhere")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(probe)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert outcome in done.stdout, done.stdout[-2000:]
    assert "PEER NOT USABLE" in done.stdout
