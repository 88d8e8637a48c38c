"""Defence in depth for auto-allowed bash commands (issue 13): an OS sandbox and hardened git.

A command the judge allows without asking (:mod:`pi_lsp.policy.readonly_commands`) is run
through a :class:`~pi_lsp.tools.bash.Launch` built here:

- **bubblewrap** (``bwrap``, Debian package ``bubblewrap``), when ``pi.bash.sandbox`` is
  ``auto`` (the default) or ``required`` and the probe succeeds: the whole file system bound
  read-only (the workspace included), ``/dev`` fresh, its own process namespace and ``/proc``
  (other processes' environments are not visible), a private ``/tmp``, no network
  (``--unshare-net``), the sandbox killed with its parent (``--die-with-parent``), and
  the protected paths masked: files found in the workspace folders that are protected (``.env``,
  keys, ``pi.protectedPaths``; ``.git`` is left readable so ``git status`` works) are covered
  with an empty file, ``.ssh`` folders (the home one too) with an empty tmpfs;
- **git hardening**, always for an auto-allowed ``git`` command: configuration given through
  ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` (the command-line scope, which
  beats any repository config) turns off the programs git runs from config (``core.fsmonitor``,
  ``core.pager``, ``diff.external``, hooks, ``gpg.program``, ``log.showSignature``, credential
  helpers) and refuses implicit bare repositories (``safe.bareRepository=explicit``, so a
  folder holding ``HEAD``, ``objects/`` and ``refs/`` is not used as a repository);
  ``GIT_CONFIG_NOSYSTEM``, ``GIT_PAGER=cat``, ``GIT_OPTIONAL_LOCKS=0`` (``git status`` does not
  write the index).

The probe runs ``bwrap ... true`` once per process (it needs unprivileged user namespaces, or
root); where it fails, :attr:`Sandbox.status` says why, the daemon logs it and reports it through
``pi/health`` (Neovim's ``:checkhealth pi_lsp`` shows it), and ``required`` makes every bash
command ask.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pi_lsp.tools.bash import Launch

logger = logging.getLogger(__name__)

SandboxMode = Literal["auto", "required", "off"]

MAX_MASK_SCAN_ENTRIES = 50_000
"""Workspace entries looked at when looking for protected files to mask (beyond: not masked,
logged; the judge's own checks still apply)."""

GIT_SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", "false"),
    ("diff.external", ""),
    ("gpg.program", "false"),
    ("log.showSignature", "false"),
    ("credential.helper", ""),
    ("safe.bareRepository", "explicit"),
    ("protocol.allow", "never"),
)
"""Configuration every auto-allowed git command runs with (the command-line scope)."""

_BWRAP_BASE = (
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
    "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent",
)


@dataclass(frozen=True)
class SandboxStatus:
    """What the sandbox can do here: ``available`` with ``tool`` (the bwrap path), else
    ``reason``; ``mode`` is the setting."""

    mode: SandboxMode
    available: bool
    tool: str | None = None
    reason: str = ""

    def to_json(self) -> dict[str, object]:
        """``{"mode", "available", "tool", "reason"}`` for ``pi/health``."""
        return {"mode": self.mode, "available": self.available, "tool": self.tool, "reason": self.reason}


def probe_bwrap(timeout_seconds: float = 10.0) -> tuple[str | None, str]:
    """``(path, "")`` when ``bwrap`` is on PATH and runs ``true`` in the sandbox used here, else
    ``(None, why)``."""
    path = shutil.which("bwrap")
    if path is None:
        return None, "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    try:
        done = subprocess.run(
            [path, *_BWRAP_BASE, "true"], stdin=subprocess.DEVNULL, capture_output=True,
            timeout=timeout_seconds, check=False,
            start_new_session=True,  # what bwrap leaves to a subreaper is then reaped as adopted
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"bwrap could not be run ({exc})"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip() or f"exit code {done.returncode}"
        return None, f"bwrap fails here: {why} (it needs unprivileged user namespaces)"
    return path, ""


class Sandbox:
    """The sandbox of one daemon or ``pi-lsp exec`` session (see the module docstring).

    ``probe`` is called at most once, on first use (injectable for tests). The scan for
    protected files to mask is reused for ``mask_cache_seconds`` (a walk of a large workspace
    takes tens of milliseconds) unless :meth:`invalidate` was called: the policy calls it after
    every call that may create files (write, edit, an asked bash command). Protected files made
    meanwhile by someone else (the user) may stay unmasked that long; the judge still checks
    every path itself."""

    def __init__(
        self,
        mode: SandboxMode = "auto",
        probe: Callable[[], tuple[str | None, str]] = probe_bwrap,
        mask_cache_seconds: float = 10.0,
    ) -> None:
        self.mode: SandboxMode = mode
        self.mask_cache_seconds = mask_cache_seconds
        self._probe = probe
        self._probed: tuple[str | None, str] | None = None
        self._cap_logged = False
        self._lock = threading.Lock()
        self._masks: tuple[tuple[str, ...], float, list[tuple[str, bool]]] | None = None

    def invalidate(self) -> None:
        """Forget the cached mask scan (files may have been created)."""
        self._masks = None

    @property
    def status(self) -> SandboxStatus:
        """The status (probes on first use; ``off`` never probes)."""
        if self.mode == "off":
            return SandboxStatus("off", False, None, "pi.bash.sandbox is off")
        with self._lock:  # the daemon probes at start-up while a first command may be judged
            if self._probed is None:
                self._probed = self._probe()
                if self._probed[0] is None:
                    logger.warning("bash sandbox unavailable: %s; auto-allowed commands run unsandboxed", self._probed[1])
                else:
                    logger.info("bash sandbox: %s", self._probed[0])
            tool, reason = self._probed
        return SandboxStatus(self.mode, tool is not None, tool, reason)

    def launch(
        self,
        *,
        git: bool,
        argv: Sequence[str] | None = None,
        program: str | None = None,
        stderr_to_null: bool = False,
        roots: Sequence[Path],
        cwd: Path | None = None,
        protected: Callable[[str], str | None],
        may_protect: Callable[[str], bool] = lambda name: True,
    ) -> Launch | None:
        """The launch of an auto-allowed command: the bwrap prefix (when available), git's
        environment, ``RIPGREP_CONFIG_PATH`` emptied (a config file could name ``--pre``), and
        ``argv``, the judged argument vector, run as it is; ``None`` when ``required`` and no
        sandbox works (ask instead). ``protected(real_path)`` names the pattern protecting a
        path; ``may_protect(name)`` is its fast pre-check by base name."""
        env = git_environment() if git else {}
        env["RIPGREP_CONFIG_PATH"] = ""
        exact = tuple(argv) if argv else None
        status = self.status
        if git and status.available:
            env["GIT_DISCOVERY_ACROSS_FILESYSTEM"] = "1"  # the workspace is its own bind mount
        if not status.available:
            if self.mode == "required":
                return None
            return Launch((), env, exact, program, stderr_to_null)
        assert status.tool is not None
        prefix = [status.tool, *_BWRAP_BASE]
        for root in roots:  # a workspace under /tmp is hidden by the private /tmp: bind it again
            real = os.path.realpath(root)
            if os.path.isdir(real):
                prefix += ["--ro-bind", real, real]
        if cwd is not None:
            prefix += ["--chdir", os.fspath(cwd)]
        for path, is_dir in self._scan(roots, protected, may_protect):
            prefix += ["--tmpfs", path] if is_dir else ["--ro-bind", "/dev/null", path]
        prefix.append("--")
        return Launch(tuple(prefix), env, exact, program, stderr_to_null)


    def _scan(
        self, roots: Sequence[Path], protected: Callable[[str], str | None], may_protect: Callable[[str], bool]
    ) -> list[tuple[str, bool]]:
        key = tuple(os.fspath(root) for root in roots)
        now = time.monotonic()
        if self._masks is not None and self._masks[0] == key and now - self._masks[1] < self.mask_cache_seconds:
            return self._masks[2]
        masks, capped = _masks(roots, protected, may_protect)
        if capped and not self._cap_logged:
            self._cap_logged = True
            logger.warning(
                "bash sandbox: more than %d workspace entries; protected files beyond them are not masked "
                "(the policy's own checks still apply)", MAX_MASK_SCAN_ENTRIES,
            )
        self._masks = (key, now, masks)
        return masks


def git_environment() -> dict[str, str]:
    """The environment of an auto-allowed git command (module docstring)."""
    env = {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_PAGER": "cat",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_COUNT": str(len(GIT_SAFE_CONFIG)),
    }
    for index, (key, value) in enumerate(GIT_SAFE_CONFIG):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def _masks(
    roots: Sequence[Path], protected: Callable[[str], str | None], may_protect: Callable[[str], bool]
) -> tuple[list[tuple[str, bool]], bool]:
    """Protected files and ``.ssh`` folders under ``roots`` (real paths) and ``~/.ssh``:
    ``(path, is_dir)``; ``.git`` folders are not entered and ``.git`` files (gitfiles) not masked
(left readable, read-only, so git works). The flag is
    true when the scan stopped at :data:`MAX_MASK_SCAN_ENTRIES`."""
    masks: list[tuple[str, bool]] = []
    home_ssh = os.path.realpath(os.path.expanduser("~/.ssh"))
    if os.path.isdir(home_ssh):
        masks.append((home_ssh, True))
    seen = 0
    for root in roots:
        top = os.path.realpath(root)
        for folder, dirs, files in os.walk(top, followlinks=False):
            keep = []
            for name in dirs:
                seen += 1
                path = os.path.join(folder, name)
                if name == ".git":
                    continue
                if name == ".ssh" or (may_protect(name) and protected(path) is not None and not os.path.islink(path)):
                    masks.append((path, True))
                    continue
                keep.append(name)
            dirs[:] = keep
            for name in files:
                seen += 1
                path = os.path.join(folder, name)
                if name == ".git":  # a gitfile (worktrees, submodules): git needs it
                    continue
                if may_protect(name) and protected(path) is not None and not os.path.islink(path):
                    masks.append((path, False))
            if seen > MAX_MASK_SCAN_ENTRIES:
                return masks, True
    return masks, False
