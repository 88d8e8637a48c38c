"""Issue 21's goal table from one run: every row of bench_search_scale, bench_big_read and bench_call.

Runs the three benches one after the other (each interleaves ours and its floors itself; see their
docstrings), shows their full output, then repeats the lines that judge a goal (``meets`` /
``MISSES``) as one summary, with the load average before and after. Exit status 0 whatever the
verdicts: a benchmark never fails a build; read the table.

Run: ``python3 bench/bench_goals.py [--quick]`` (``--quick``: fewer rounds, for a smoke run).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = {
    "bench_search_scale.py": (["--rounds", "7"], ["--rounds", "2"]),
    "bench_big_read.py": (["--rounds", "5"], ["--rounds", "2"]),
    "bench_call.py": (["--reps", "5"], ["--reps", "2", "--calls", "50"]),
}


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run; figures are noisier)")
    options = parser.parse_args()
    verdicts: list[str] = []
    print(f"load average before: {_load()} ({os.cpu_count()} CPUs)", flush=True)
    for script, (full, quick) in BENCHES.items():
        print(f"\n== {script}", flush=True)
        process = subprocess.Popen(
            [sys.executable, str(HERE / script), *(quick if options.quick else full)],
            stdout=subprocess.PIPE, text=True,
        )
        assert process.stdout is not None
        title = ""
        for line in process.stdout:
            print(line, end="", flush=True)
            if not line.startswith(" "):
                title = line.strip()
            if "meets" in line or "MISSES" in line:
                verdicts.append(f"{script}: {line.strip()}" if line.startswith("  ") and "ratio" not in line
                                else f"{script}: {title}: {line.strip()}")
        if process.wait() != 0:
            verdicts.append(f"{script}: FAILED (exit status {process.returncode})")
    print(f"\nload average after: {_load()}")
    print("goals (issue 21):")
    for verdict in verdicts:
        print(f"  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
