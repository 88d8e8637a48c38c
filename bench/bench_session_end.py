"""Bench: the cost of ending a session's processes (issue 12, "Leaving the daemon must not cost a
scan of every process on the machine when it started none").

Runs in a child Python process that makes itself a child subreaper, like the daemon and
``pi-lsp exec``, while ``BYSTANDERS`` unrelated ``sleep`` processes run on the machine (they are
what a whole-machine ``/proc`` scan has to read). Measures ``ProcessRegistry.end_all_blocking(
include_children=True)``:

1. when the registry never started a process;
2. after one bash command that left a daemonised grandchild (``setsid sleep``), the grace period
   excluded (the grandchild dies at SIGTERM, so the time is the scans plus the polling).

Also prints, as the floor measured in the same run, one full ``/proc`` scan (``iter_processes``
plus reading every ``environ``, what the tag scan did before issue 12).

Run: ``python3 bench/bench_session_end.py [bystanders]``. Prints milliseconds; never asserts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, statistics, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from pi_lsp.tools.shell.processes import ProcessRegistry, become_child_subreaper, iter_processes, _has_tag

become_child_subreaper()

def timed(fn, runs=7):
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)

def idle():
    ProcessRegistry(kill_grace_seconds=0.5).end_all_blocking(include_children=True)

def one_command():
    registry = ProcessRegistry(kill_grace_seconds=0.5)
    shell = subprocess.Popen(["/bin/bash", "-c", "(setsid sleep 300 &); echo up"], env=registry.spawn_env(),
                             start_new_session=True, stdout=subprocess.PIPE)
    shell.stdout.readline()
    shell.wait()
    start = time.perf_counter()
    registry.end_all_blocking(include_children=True)
    return (time.perf_counter() - start) * 1000

def full_scan():
    marker = b"PI_LSP_PROCESS_TAG=none\0"
    for info in iter_processes():
        _has_tag(info.pid, marker)

print(json.dumps({
    "processes": sum(1 for _ in iter_processes()),
    "idle_ms": timed(idle),
    "one_command_ms": statistics.median(one_command() for _ in range(5)),
    "full_scan_ms": timed(full_scan),
}))
"""


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    bystanders = [subprocess.Popen(["sleep", "600"]) for _ in range(count)]
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(REPO)], capture_output=True, text=True, check=True)
    finally:
        for proc in bystanders:
            proc.kill()
        for proc in bystanders:
            proc.wait()
    figures = json.loads(done.stdout)
    print(f"processes on the machine: {figures['processes']}")
    print(f"end of a session that started nothing: {figures['idle_ms']:.2f} ms")
    print(f"end of a session after one command (daemonised grandchild): {figures['one_command_ms']:.2f} ms")
    print(f"one whole-machine /proc scan with environ reads: {figures['full_scan_ms']:.2f} ms")


if __name__ == "__main__":
    main()
