"""Bench: bash with ``seq 1 3000000`` (about 21 MB of output) against the shell alone.

Targets (issue 3, Speed): pi-lsp's wall time <= 1.2x ``seq 1 3000000 | cat > /dev/null`` measured
in the same run, and this process's memory growth < 64 MB (the peer: 171 ms, 167 MB).

Ours is ``BashTool.execute`` in-process with a live ``on_update`` listener (as in a real session),
timed with ``perf_counter``; the baseline is ``/bin/bash -c 'seq 1 3000000 | cat > /dev/null'``
run with ``subprocess.run``. Memory growth is the peak RSS (``ru_maxrss``) after the runs minus
the peak before them (after imports, before a warm-up call). Medians of several runs, alternating.

Run: ``python3 bench/bench_bash.py [runs]``. Prints times and ratios; never asserts.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pi_lsp.agent.tool import ToolContext  # noqa: E402
from pi_lsp.tools.bash import BashArgs, BashTool  # noqa: E402
from pi_lsp.tools.environment import ToolEnvironment, ToolSettings  # noqa: E402
from pi_lsp.tools.shell.processes import ProcessRegistry  # noqa: E402

COMMAND = "seq 1 3000000"
BASELINE = "seq 1 3000000 | cat > /dev/null"
TIME_TARGET = 1.2
MEMORY_TARGET_MB = 64


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _cpu_seconds() -> float:
    """CPU (user + system) of this process and its reaped children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _baseline_seconds() -> tuple[float, float]:
    cpu = _cpu_seconds()
    start = time.perf_counter()
    subprocess.run(["/bin/bash", "-c", BASELINE], check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start, _cpu_seconds() - cpu


async def _ours_seconds(tool: BashTool, command: str) -> tuple[float, float, str, int]:
    updates: list[object] = []
    ctx = ToolContext("bench", on_update=updates.append)
    cpu = _cpu_seconds()
    start = time.perf_counter()
    result = await tool.execute(BashArgs(command=command), ctx)
    seconds = time.perf_counter() - start
    return seconds, _cpu_seconds() - cpu, result.content[0].text, len(updates)  # type: ignore[union-attr]


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        registry = ProcessRegistry()
        env = ToolEnvironment(
            cwd=root, files=None, temp_dir=root / "spill", processes=registry,  # type: ignore[arg-type]
            settings=ToolSettings(),
        )
        tool = BashTool(env)
        before = _peak_rss_mb()  # after imports, before any call
        await _ours_seconds(tool, "seq 1 100000")  # warm-up: lazy imports, regexes, first spill
        _baseline_seconds()
        ours: list[float] = []
        base: list[float] = []
        ours_cpu: list[float] = []
        base_cpu: list[float] = []
        updates = 0
        text = ""
        for _ in range(runs):
            seconds, cpu = _baseline_seconds()
            base.append(seconds)
            base_cpu.append(cpu)
            seconds, cpu, text, updates = await _ours_seconds(tool, COMMAND)
            ours.append(seconds)
            ours_cpu.append(cpu)
        growth = _peak_rss_mb() - before
        await registry.end_all()
    if "3000000\n" not in text:
        raise SystemExit(f"unexpected output tail: {text[-200:]!r}")
    ours_ms = statistics.median(ours) * 1000
    base_ms = statistics.median(base) * 1000
    ratio = ours_ms / base_ms
    print(f"bash `{COMMAND}`: pi-lsp median {ours_ms:.0f} ms over {runs} runs ({updates} updates in the last)")
    print(f"baseline `{BASELINE}`: median {base_ms:.0f} ms")
    print(f"time ratio pi-lsp / baseline: {ratio:.2f}x (target <= {TIME_TARGET}x) {'OK' if ratio <= TIME_TARGET else 'MISSED'}")
    cpu_ratio = statistics.median(ours_cpu) / statistics.median(base_cpu)
    print(
        f"CPU (user+sys, with children): pi-lsp {statistics.median(ours_cpu) * 1000:.0f} ms, "
        f"baseline {statistics.median(base_cpu) * 1000:.0f} ms, ratio {cpu_ratio:.2f}x"
    )
    print(
        f"peak RSS growth: {growth:.1f} MB (target < {MEMORY_TARGET_MB} MB) "
        f"{'OK' if growth < MEMORY_TARGET_MB else 'MISSED'}"
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 7))
