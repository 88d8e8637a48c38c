"""Bench: ``pi-lsp exec`` start-up (issue 2: "starts in well under half a second").

Each command runs as a fresh ``python3`` process; its cost is the **CPU time** (user + system) the
kernel reports for it through ``os.wait4`` (wall time is meaningless on a loaded machine). Commands,
run in alternation ``RUNS`` times each:

- ``bare``: ``python3 -c pass`` (the interpreter and ``site``, the floor of any Python CLI);
- ``pydantic``: ``python3 -c "from pydantic import BaseModel"`` (the library every wire type uses);
- ``exec-empty``: ``python3 -m pi_lsp exec --cwd DIR`` with empty stdin (start-up and clean exit);
- ``exec-read``: the same with one read of a one-line file on stdin (the answer is checked).

Prints medians, the exec lines minus ``bare`` (what pi-lsp itself costs) and ratios. Never asserts.
Run: ``python3 bench/bench_exec_startup.py [runs]``. ``python3 -X importtime -m pi_lsp exec ...``
shows where the import part of the time goes.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 15
READ_LINE = json.dumps({"toolCall": {"id": "c1", "name": "read", "arguments": {"path": "a.txt"}}}) + "\n"


def _cpu_seconds(argv: list[str], stdin: bytes) -> tuple[float, bytes]:
    """Run ``argv`` to the end; return its user+system CPU seconds and its stdout."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=REPO)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "a.txt").write_text("hello\n")
        exec_argv = [sys.executable, "-m", "pi_lsp", "exec", "--cwd", tmp]
        commands = {
            "bare": ([sys.executable, "-c", "pass"], b""),
            "pydantic": ([sys.executable, "-c", "from pydantic import BaseModel"], b""),
            "exec-empty": (exec_argv, b""),
            "exec-read": (exec_argv, READ_LINE.encode()),
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(RUNS):
            for name, (argv, stdin) in commands.items():
                cpu, out = _cpu_seconds(argv, stdin)
                if name == "exec-read" and json.loads(out)["content"][0]["text"] != "hello\n":
                    raise SystemExit(f"unexpected answer: {out!r}")
                times[name].append(cpu * 1000)
    med = {name: statistics.median(values) for name, values in times.items()}
    for name, value in med.items():
        print(f"{name:11s} median CPU {value:7.1f} ms")
    for name in ("exec-empty", "exec-read"):
        print(
            f"{name:11s} {med[name] / med['bare']:.2f}x bare python, "
            f"{med[name] / med['pydantic']:.2f}x import pydantic, "
            f"pi-lsp's own part {med[name] - med['bare']:.1f} ms"
        )


if __name__ == "__main__":
    main()
