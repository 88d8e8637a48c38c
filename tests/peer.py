"""The real Pi peer for differential tests: where it lives and how to run JSON Lines through it.

The peer is ``../shared/peer`` (relative to the repository root): a JSON Lines driver around the real
Pi tools, without its ``node_modules``. :func:`peer_dir` provides a directory that has them:

- ``$PI_LSP_PEER_DIR`` when set (a ready copy, e.g. ``/work/peer``);
- otherwise ``<repo>/.peer`` (git-ignored): the shared files are copied there and
  ``npm ci --ignore-scripts`` runs once; it runs again only when ``package-lock.json`` changed.

Missing node/npm, a missing ``../shared/peer`` or a failed install make the tests that need the peer
skip with a loud reason on a user's machine (never pass silently) and FAIL under ``CI=true``, where
a missing peer means the differential tests did not run (issue 12). Several pytest processes may share the working tree,
so the install runs under a file lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterable

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SHARED_PEER = SHARED / "peer"
CASES = SHARED_PEER / "examples" / "cases.jsonl"
MAKE_FIXTURE = SHARED_PEER / "make_fixture.py"
LOCAL_PEER = REPO / ".peer"
TESTS = Path(__file__).resolve().parent

INSTALL_TIMEOUT_SECONDS = 600.0
RUN_TIMEOUT_SECONDS = 300.0


def _lock_digest(directory: Path) -> str:
    return hashlib.sha256((directory / "package-lock.json").read_bytes()).hexdigest()


def peer_unavailable(reason: str) -> None:
    """Stop the test that needs the peer: ``pytest.fail`` under ``CI=true``, else a loud skip."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}\n(CI=true: the differential tests must run, so a missing peer fails)")
    pytest.skip(reason)


def peer_dir() -> Path:
    """A peer directory with ``node_modules``, installing it if needed; else :func:`peer_unavailable`."""
    configured = os.environ.get("PI_LSP_PEER_DIR")
    if configured:
        path = Path(configured)
        if not (path / "pi-tools.mjs").is_file() or not (path / "node_modules").is_dir():
            peer_unavailable(f"PEER NOT USABLE: $PI_LSP_PEER_DIR={path} lacks pi-tools.mjs or node_modules")
        return path
    if not (SHARED_PEER / "pi-tools.mjs").is_file():
        peer_unavailable(f"PEER MISSING: {SHARED_PEER} not found; differential tests cannot run")
    if shutil.which("node") is None or shutil.which("npm") is None:
        peer_unavailable("PEER UNAVAILABLE: node/npm not on PATH; install Node >= 20.6 to run peer tests")
    LOCAL_PEER.mkdir(exist_ok=True)
    with open(LOCAL_PEER / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for item in SHARED_PEER.iterdir():
            if item.name == "node_modules":
                continue
            target = LOCAL_PEER / item.name
            if item.is_dir():
                shutil.copytree(item, target, dirs_exist_ok=True)
            else:
                shutil.copy2(item, target)
        stamp = LOCAL_PEER / ".installed-lock.sha256"
        digest = _lock_digest(LOCAL_PEER)
        installed = stamp.read_text().strip() if stamp.is_file() else ""
        if installed != digest or not (LOCAL_PEER / "node_modules").is_dir():
            done = subprocess.run(
                ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
                cwd=LOCAL_PEER,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT_SECONDS,
                stdin=subprocess.DEVNULL,
            )
            if done.returncode != 0:
                peer_unavailable(f"PEER INSTALL FAILED (npm ci in {LOCAL_PEER}):\n{done.stderr[-2000:]}")
            stamp.write_text(digest)
    return LOCAL_PEER


def _run(argv: list[str], cwd: Path, lines: Iterable[Any], timeout: float) -> list[dict[str, Any]]:
    payload = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run(
        argv, cwd=cwd, input=payload, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise AssertionError(f"{argv[:2]} exited {done.returncode}:\n{done.stderr[-4000:]}")
    return [json.loads(out) for out in done.stdout.split("\n") if out.strip()]


def run_peer(
    peer: Path, lines: Iterable[dict[str, Any]], *, timeout: float = RUN_TIMEOUT_SECONDS
) -> list[dict[str, Any]]:
    """Run request objects (``{"cwd", "toolCall"}``) through ``pi-tools.mjs``; one answer each.

    Answers are ``{"id", "isError", "content", "details", "ms"}`` (see the peer's README).
    """
    return _run(["node", "pi-tools.mjs"], peer, lines, timeout)


def run_peer_script(
    peer: Path, script: str, lines: Iterable[Any] = (), *, timeout: float = RUN_TIMEOUT_SECONDS
) -> list[Any]:
    """Run ``tests/<script>`` (an ES module importing the peer's packages) in the peer directory.

    The script is passed with ``--input-type=module -e`` so its imports resolve from the peer's
    ``node_modules`` (never copied into the peer). ``lines`` go to its stdin as JSON Lines; every
    stdout line is parsed as JSON.
    """
    source = (TESTS / script).read_text(encoding="utf-8")
    return _run(["node", "--input-type=module", "-e", source], peer, lines, timeout)
