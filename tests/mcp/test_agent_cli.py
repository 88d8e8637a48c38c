"""A real agent CLI connects to ``pi-lsp mcp``: Claude Code's ``claude mcp list`` health check.

``claude mcp list`` starts each configured server, runs the MCP handshake and prints
``✔ Connected`` for a server that answers (it needs no login and no network). The CLI comes from
the npm registry into ``.agent-cli/`` (``.ci/run`` installs it under ``CI=true``); elsewhere the test
skips, saying how to install it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.daemon_support import REPO, server_env

CLAUDE = REPO / ".agent-cli" / "node_modules" / ".bin" / "claude"


def _claude() -> Path:
    if CLAUDE.exists():
        return CLAUDE
    message = (
        f"Claude Code CLI not installed at {CLAUDE}: "
        "(mkdir -p .agent-cli && cd .agent-cli && npm install @anthropic-ai/claude-code@2)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {message}")
    pytest.skip(message)


def test_claude_code_lists_pi_lsp_as_connected(tmp_path: Path) -> None:
    claude = _claude()
    home = tmp_path / "home"
    home.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = server_env(HOME=str(home))
    env.pop("ANTHROPIC_API_KEY", None)
    add = subprocess.run(
        [str(claude), "mcp", "add", "--scope", "user", "pi-lsp", "--",
         sys.executable, "-m", "pi_lsp", "mcp", "--cwd", str(workspace)],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120,
    )
    assert add.returncode == 0, add.stderr
    listed = subprocess.run(
        [str(claude), "mcp", "list"], cwd=workspace, env=env, capture_output=True, text=True, timeout=180,
    )
    line = next((l for l in listed.stdout.splitlines() if l.startswith("pi-lsp:")), "")
    assert "Connected" in line, listed.stdout + listed.stderr
