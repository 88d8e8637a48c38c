"""The process registry (pi_lsp/tools/shell/processes.py) with real processes.

Subreaper adoption runs in a child Python process so this pytest process never becomes a subreaper.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pi_lsp.tools.shell.processes import (
    TAG_VARIABLE,
    ProcessRegistry,
    group_members,
    is_alive,
    is_child_subreaper,
    proc_info,
)

BOUND = 5.0


def _spawn(registry: ProcessRegistry | None, script: str, *, tagged: bool = True) -> subprocess.Popen:
    env = registry.spawn_env() if registry is not None and tagged else dict(os.environ)
    return subprocess.Popen(
        ["/bin/bash", "-c", script], env=env, start_new_session=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
    )


def _ready(proc: subprocess.Popen) -> str:
    line = proc.stdout.readline().decode().strip()  # type: ignore[union-attr]
    assert line, "the child printed nothing"
    return line


def test_proc_info_parses_names_with_spaces_and_parentheses(tmp_path: Path) -> None:
    odd = tmp_path / "a b) (c"
    shutil.copy("/bin/sleep", odd)
    proc = subprocess.Popen([str(odd), "30"], start_new_session=True)
    try:
        info = proc_info(proc.pid)
        assert info is not None
        assert (info.ppid, info.pgid, info.sid, info.state in "RSD") == (os.getpid(), proc.pid, proc.pid, True)
    finally:
        proc.kill()
        proc.wait()
    assert proc_info(proc.pid) is None and not is_alive(proc.pid)


def test_terminate_group_plain_and_escalated() -> None:
    registry = ProcessRegistry(kill_grace_seconds=0.3)
    polite = _spawn(registry, "sleep 30 & echo up; wait")
    stubborn = _spawn(registry, "trap '' TERM; sleep 30 & echo up; while :; do sleep 0.05; done")
    import asyncio

    async def end(proc: subprocess.Popen) -> tuple[bool, float]:
        _ready(proc)
        registry.register(proc.pid)
        start = time.monotonic()
        killed = await registry.terminate_group(proc.pid)
        return killed, time.monotonic() - start

    killed, seconds = asyncio.run(end(polite))
    assert killed is False and seconds < BOUND
    killed, seconds = asyncio.run(end(stubborn))
    assert killed is True and 0.25 < seconds < BOUND
    for proc in (polite, stubborn):
        proc.wait(timeout=BOUND)
        assert group_members(proc.pid) == []


def test_tagged_pids_are_only_ours() -> None:
    registry = ProcessRegistry()
    other = ProcessRegistry()
    ours = _spawn(registry, "echo up; exec sleep 30")
    theirs = _spawn(other, "echo up; exec sleep 30")
    untagged = _spawn(None, "echo up; exec sleep 30")
    try:
        for proc in (ours, theirs, untagged):
            _ready(proc)
        assert registry.tagged_pids() == [ours.pid]
        assert registry.spawn_env({"A": "1"}) == {"A": "1", TAG_VARIABLE: registry.token}
    finally:
        for proc in (ours, theirs, untagged):
            proc.kill()
            proc.wait()


def test_end_all_blocking_ends_groups_and_tagged_daemons() -> None:
    registry = ProcessRegistry(kill_grace_seconds=0.3)
    leader = _spawn(registry, "(setsid sleep 30 & echo $!) ; trap '' TERM; echo up; while :; do sleep 0.05; done")
    daemon_pid = int(_ready(leader))
    _ready(leader)
    registry.register(leader.pid)
    start = time.monotonic()
    registry.end_all_blocking()
    assert time.monotonic() - start < BOUND
    leader.wait(timeout=BOUND)
    assert group_members(leader.pid) == [] and not is_alive(daemon_pid)
    assert registry.groups == frozenset()


def test_end_all_with_nothing_to_do_is_quick() -> None:
    registry = ProcessRegistry()
    registry.register(2**22 + 12345)  # a group that does not exist
    start = time.monotonic()
    registry.end_all_blocking()
    assert time.monotonic() - start < 1.0


def test_leaving_without_having_started_a_process_reads_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 12: ending a session that ran no command scanned every process of the machine, twice
    from pi_lsp.tools.shell import processes

    def forbidden(*_args: object) -> None:
        raise AssertionError("a process was looked up although none was ever started")

    for name in ("iter_processes", "descendants", "proc_info", "is_child_subreaper"):
        monkeypatch.setattr(processes, name, forbidden)
    registry = ProcessRegistry(kill_grace_seconds=0.1)
    assert registry.started is False
    registry.end_all_blocking(include_children=True)
    import asyncio

    asyncio.run(registry.end_all(include_children=True))


_SUBREAPER_SCRIPT = textwrap.dedent(
    """
    import json, os, subprocess, time
    from pi_lsp.tools.shell import processes
    from pi_lsp.tools.shell.processes import ProcessRegistry, become_child_subreaper, proc_info
    from pi_lsp.tools.shell.processes import is_child_subreaper
    ok = not is_child_subreaper() and become_child_subreaper() and is_child_subreaper()
    registry = ProcessRegistry(kill_grace_seconds=0.3)
    # a double fork with a cleared environment: found only because it is adopted by us
    subprocess.run(["/bin/bash", "-c", "(setsid env -i /bin/sleep 30 & echo $! > pid)"], check=True,
                   env=registry.spawn_env())
    def whole_machine_scan():
        raise AssertionError("a subreaper scanned every process of the machine")
    processes.iter_processes = whole_machine_scan  # only our own subtree may be read
    time.sleep(0.2)
    pid = int(open("pid").read())
    adopted_by_us = proc_info(pid).ppid == os.getpid()
    registry.end_all_blocking(include_children=True)
    info = proc_info(pid)
    print(json.dumps({"ok": ok, "adopted": adopted_by_us, "gone": info is None, "pid": pid}))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreaper is Linux-only")
def test_subreaper_adopts_kills_and_reaps_orphans_reading_only_its_subtree(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _SUBREAPER_SCRIPT], cwd=tmp_path, capture_output=True, text=True,
        timeout=30, env={**os.environ, "PYTHONPATH": str(repo)},
    )
    assert done.returncode == 0, done.stderr
    assert '"ok": true' in done.stdout and '"adopted": true' in done.stdout
    assert '"gone": true' in done.stdout  # killed and reaped: not even a zombie is left


def test_signals_never_reach_our_own_group() -> None:
    registry = ProcessRegistry(kill_grace_seconds=0.1)
    registry.register(os.getpgrp())
    previous = signal.signal(signal.SIGTERM, lambda *_: pytest.fail("SIGTERM reached the test runner"))
    start = time.monotonic()
    try:
        registry.end_all_blocking()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert time.monotonic() - start < 1.0  # our own group is not even waited for


def test_include_children_spares_unrelated_children_outside_a_subreaper() -> None:
    # this test runner is no subreaper: a session hosted here must not end the runner's children
    assert not is_child_subreaper()
    registry = ProcessRegistry(kill_grace_seconds=0.1)
    bystander = _spawn(None, "echo up; exec sleep 30")
    try:
        _ready(bystander)
        registry.end_all_blocking(include_children=True)
        assert is_alive(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()
