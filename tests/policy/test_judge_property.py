"""Property test of the bash judge (issue 13): random commands built from the allowed commands'
options and dangerous ones, ``--`` placements, glued values, quotes and globs, judged by the
policy; every command it allows is then run by bash under ``strace`` (no sandbox) in the scratch
workspace, and what the kernel saw is compared with the verdict. An auto-allowed command must
never execute another program, open anything for writing, or open a protected file or a file
outside the workspace (canary files: ``.env``, ``key.pem``, ``.git/config``, ``outside/secret.txt``,
``/etc/hostname``, reached directly, through globs or through symlinks before ``..``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.policy.policy_support import Workspace

PATHS = [
    "a.txt", "src/b.py", ".env", "key.pem", ".git/config", "h/../config", "r/../etc/hostname",
    "o/secret.txt", "src/../a.txt", "./a.txt", "*", ".*", ".[^x]nv", ".[[:alpha:]]nv", "*.txt",
    "src/*", "s*/../.e?v", "link-env", "/etc/hostname", "out.txt", "-", "src", ".", "..", "h", "{a,key}.*",
]
OPTIONS = {
    "cat": ["-n", "-A", "-v"],
    "head": ["-n", "-c", "-5", "-q"],
    "tail": ["-n", "-c", "-3"],
    "grep": ["-n", "-i", "-r", "-R", "-e", "-f", "-l", "-c", "-d", "--include", "--file", "-C"],
    "rg": ["-n", "-i", "-e", "-f", "--pre", "--hidden", "-uu", "-g", "--files", "-z", "-L"],
    "sort": ["-r", "-n", "-k", "-o", "-T", "--output", "--files0-from", "-u"],
    "wc": ["-l", "-c", "--files0-from"],
    "ls": ["-l", "-a", "-R", "-d"],
    "du": ["-s", "-h", "--files0-from"],
    "file": ["-b", "-f", "-m"],
    "diff": ["-u", "-r", "--from-file", "-q"],
    "find": ["-name", "-type", "-exec", "-delete", "-fprint", "-files0-from", "-newer", "-maxdepth"],
}
VALUES = ["--", "1", "x", "*.txt", "./run.sh", "{}", "\\;", "cat", "f"]
CANARIES = (".env", "key.pem", ".git/config")
_OPEN = re.compile(r'^\d+\s+openat\([^,]+, "(?P<arg>(?:[^"\\]|\\.)*)", (?P<flags>[A-Z_|]+)(?:, \d+)?\) = \d+<(?P<path>[^>]*)>')
_EXEC = re.compile(r'^\d+\s+execve\("(?P<prog>(?:[^"\\]|\\.)*)", .* = 0$')
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")


def _strace() -> str:
    path = shutil.which("strace")
    if path is None:
        message = "strace is not installed; CI installs it (apt-get install strace)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message + "; the judge property test is skipped on this machine")
    return path


def _quote(word: str, style: int) -> str:
    if style == 1 and "'" not in word:
        return f"'{word}'"
    if style == 2 and not set(word) & set('"\\$`'):
        return f'"{word}"'
    if style == 3 and word and word[0] not in "\\":
        return "\\" + word
    return word


@st.composite
def commands(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(sorted(OPTIONS)))
    words: list[str] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["option", "option", "path", "path", "dashdash", "glued", "value"]))
        if kind == "option":
            words.append(draw(st.sampled_from(OPTIONS[name])))
        elif kind == "path":
            words.append(draw(st.sampled_from(PATHS)))
        elif kind == "dashdash":
            words.append("--")
        elif kind == "glued":
            option = draw(st.sampled_from(OPTIONS[name]))
            value = draw(st.sampled_from(PATHS + VALUES))
            words.append(f"{option}={value}" if option.startswith("--") else option + value)
        else:
            words.append(draw(st.sampled_from(VALUES)))
    styles = draw(st.lists(st.integers(0, 3), min_size=len(words), max_size=len(words)))
    # globs and braces stay unquoted where style 0 is drawn, so bash expands them
    return " ".join([name, *(_quote(w, s) for w, s in zip(words, styles))])


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    ws = Workspace(tmp_path_factory.mktemp("judge"))
    root = ws.ws
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (root / "run.sh").write_text("#!/bin/sh\necho ran\n", encoding="utf-8")
    os.chmod(root / "run.sh", 0o755)
    os.symlink(root / ".git" / "hooks", root / "h")
    os.symlink("/usr", root / "r")
    os.symlink(ws.outside, root / "o")
    os.symlink(root / ".env", root / "link-env")
    return ws


def _violations(ws: Workspace, command: str, strace: str) -> list[str]:
    log = ws.base / "strace.log"
    subprocess.run(
        [strace, "-f", "-y", "-qq", "-e", "trace=openat,execve", "-o", str(log), "/bin/bash", "-c", command],
        cwd=ws.ws, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30,
        check=False,
    )
    canaries = {os.path.realpath(ws.ws / c) for c in CANARIES} | {"/etc/hostname"}
    outside = os.path.realpath(ws.outside) + "/"
    name = command.split()[0]
    found: list[str] = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if (match := _EXEC.match(line)) is not None:
            if os.path.basename(match["prog"]) not in ("bash", name):
                found.append(f"ran {match['prog']}")
        elif (match := _OPEN.match(line)) is not None:
            path = match["path"]
            if any(flag in match["flags"] for flag in _WRITE_FLAGS) and not path.startswith(("/dev/", "/proc/")):
                found.append(f"opened {path} for writing")
            if path in canaries or path.startswith(outside):
                found.append(f"opened {path}")
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(command=commands())
def test_an_auto_allowed_command_never_runs_writes_or_reads_what_it_must_not(scratch: Workspace, command: str) -> None:
    strace = _strace()
    decision = scratch.bash(command)
    event(decision.action)
    if decision.action != "allow":
        return
    violations = _violations(scratch, command, strace)
    assert violations == [], f"{command!r} was auto-allowed but {violations}"


def test_the_tracer_sees_what_a_command_opens(scratch: Workspace) -> None:
    """The comparison is not vacuous: run unjudged, the tracer reports each kind of violation."""
    strace = _strace()
    assert _violations(scratch, "cat h/../config", strace) == [f"opened {os.path.realpath(scratch.ws / '.git/config')}"]
    assert _violations(scratch, "cat .[^x]nv", strace) == [f"opened {os.path.realpath(scratch.ws / '.env')}"]
    assert any("ran" in v for v in _violations(scratch, "rg -e -- --pre ./run.sh x a.txt", strace))
    assert any("for writing" in v for v in _violations(scratch, "sort -o out.txt a.txt", strace))
    (scratch.ws / "out.txt").unlink()
    assert _violations(scratch, "cat a.txt", strace) == []
