"""What the VS Code tests share: where the extension, code-server and Chromium are, npm, building
the ``.vsix`` and running a real-workbench harness (``editors/vscode/test-workbench/*.js``) against a
``pi-lsp replay`` of a recorded session."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.editors.editor_support import REPO, Replay, editor_env, make_shim

EXTENSION = REPO / "editors" / "vscode"
WORKBENCH = EXTENSION / "test-workbench"
CODE_SERVER = EXTENSION / ".cache" / "code-server" / "node_modules" / ".bin" / "code-server"
CHROMIUM = Path("/usr/bin/chromium")
NPM_TIMEOUT_SECONDS = 600


def npm_or_skip() -> str:
    """The ``npm`` executable; skips the test when node or npm is not installed."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node/npm are not installed: the VS Code extension's tests are skipped on this machine")
    return npm


def run(argv: list[str], cwd: Path, timeout: float = NPM_TIMEOUT_SECONDS) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in ``cwd`` with no stdin, capturing its text output; ``timeout`` in seconds."""
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def ensure_node_modules(npm: str, folder: Path) -> None:
    """``npm ci`` in ``folder`` unless it has its ``node_modules`` already (asserts it succeeds)."""
    if not (folder / "node_modules").is_dir():
        done = run([npm, "ci", "--no-audit", "--no-fund"], folder)
        assert done.returncode == 0, f"npm ci in {folder} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def build_vsix() -> Path:
    """Build and package the extension (``npm run package``); the path of ``pi-lsp.vsix``."""
    npm = npm_or_skip()
    ensure_node_modules(npm, EXTENSION)
    target = EXTENSION / "pi-lsp.vsix"
    target.unlink(missing_ok=True)
    done = run([npm, "run", "package"], EXTENSION)
    assert done.returncode == 0, f"npm run package failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert target.is_file(), done.stdout[-2000:]
    return target


@dataclass
class HarnessRun:
    """A finished harness run: its ``artifacts`` folder ($E2E_DIR), its stdout + stderr and the
    replay's ``divergences`` (its ``replay:`` lines: requests that differed from the recording)."""

    artifacts: Path
    output: str
    divergences: list[str]


def run_workbench_harness(script: str, session: str, tmp_path: Path, vsix: Path, *, harness_timeout_ms: int,
                          timeout_seconds: float, **extra_env: str) -> HarnessRun:
    """Run ``node <script>`` in the test-workbench folder against a replay of ``session`` (a file there).

    The harness gets CODE_SERVER, VSIX, PI_LSP_SERVER (a shim), PI_BASE_URL, E2E_DIR, CHROMIUM,
    E2E_TIMEOUT_MS=``harness_timeout_ms`` and ``extra_env``; ``timeout_seconds`` bounds the whole run.
    Asserts code-server and Chromium are installed, that the harness exits 0 and that no check failed.
    """
    missing = [str(p) for p in (CODE_SERVER, CHROMIUM) if not p.exists()]
    assert not missing, f"CI=true but {missing} missing: run editors/vscode/ci-setup.sh first"
    ensure_node_modules(npm_or_skip(), WORKBENCH)
    shim = make_shim(tmp_path / "bin")
    replay = Replay(WORKBENCH / session)
    artifacts = tmp_path / "workbench"  # screenshots, logs, the workspace copy: kept by pytest for a look
    artifacts.mkdir(parents=True)
    env = editor_env(tmp_path, shim_dir=None, CODE_SERVER=str(CODE_SERVER), VSIX=str(vsix),
                     PI_LSP_SERVER=str(shim), PI_BASE_URL=replay.url, **extra_env, E2E_DIR=str(artifacts),
                     CHROMIUM=str(CHROMIUM), E2E_TIMEOUT_MS=str(harness_timeout_ms))
    env["PATH"] = os.pathsep.join([str(Path(shutil.which("node") or "node").parent), env["PATH"]])
    # Chromium's singleton socket goes in its TMPDIR: a short folder, not tmp_path, whose depth
    # (pytest-1007/test_real_workbench_.../) took the socket path over the 107-byte limit
    env["CHROMIUM_TMPDIR"] = browser_tmp = tempfile.mkdtemp(prefix="pi-wb-")
    try:
        done = subprocess.run(["node", script], cwd=WORKBENCH, env=env, capture_output=True, text=True,
                              timeout=timeout_seconds, stdin=subprocess.DEVNULL)
    finally:
        replay.stop()
        shutil.rmtree(browser_tmp, ignore_errors=True)
    output = done.stdout + done.stderr
    divergences = [line for line in replay.stderr if line.startswith("replay:")]
    assert done.returncode == 0, (
        f"workbench test failed (exit {done.returncode}); artifacts (screenshot, logs) in {artifacts}\n"
        f"{output[-12000:]}\n--- replay:\n" + "\n".join(replay.stderr[-40:])
    )
    assert "FAIL" not in output and "checks passed" in output, output[-4000:]
    return HarnessRun(artifacts, output, divergences)
