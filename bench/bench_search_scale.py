"""grep and find at 3,000 and 30,000 files: pi-lsp vs its floor vs Pi, one interleaved run (issue 21).

Two generated trees (cached in a temp folder): 3,000 and 30,000 files of about 1.8 KB in 30 x 10
directories; one file in 750 holds a needle line and is named ``*_target.json``, so grep finds
4 / 40 lines and find 4 / 40 files: the whole tree is read or listed, the answer is small.

Per round, for each tree, in alternation:

- grep floor: pi-lsp's own ``rg`` with the arguments pi-lsp gives it, without ``--sort`` (rg's
  parallel walk), its output read whole from a pipe; ``rg --sort=path`` (pi-lsp's old plan) too;
- find floors: ``fdfind`` with Pi's arguments (``--glob --color=never --hidden --max-results 1000``)
  and ``rg --files -g PATTERN`` (the glob pushed into rg; note it would include .gitignore'd
  files, so pi-lsp cannot use it as is), and ``rg --files`` (the whole listing pi-lsp reads,
  also as pi-lsp runs it: one thread, from inside the directory);
- pi-lsp: ``GrepTool.execute`` / ``FindTool.execute`` in this process;
- Pi (when the peer is installed): one ``pi-tools.mjs`` process per round, its own ``ms`` field.

Prints medians, the ratios to the floor and to Pi, the cost per 10x of input (30,000-file median
over 3,000-file median) and the load average before and after. Never asserts.

Run: ``python3 bench/bench_search_scale.py [--rounds N] [--root DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pi_lsp.agent.tool import ToolContext  # noqa: E402
from pi_lsp.tools.environment import ToolEnvironment  # noqa: E402
from pi_lsp.tools.file_io.local_files import LocalFileAccess  # noqa: E402
from pi_lsp.tools.find import FindTool  # noqa: E402
from pi_lsp.tools.grep import GrepTool  # noqa: E402
from pi_lsp.tools.search.ripgrep import find_rg  # noqa: E402

SIZES = (3_000, 30_000)
GREP_PATTERN = "needle_[0-9]+_here"
FIND_PATTERN = "*_target.json"
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def build_tree(root: Path, files: int) -> None:
    """``files`` files under ``root/pkgNN/subN/``; one in 750 is a ``*_target.json`` needle."""
    marker = root / ".complete"
    if marker.exists():
        return
    rng = random.Random(7)
    for i in range(files):
        directory = root / f"pkg{i % 30:02d}" / f"sub{(i // 30) % 10}"
        directory.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(rng.choice(WORDS) for _ in range(10)) for _ in range(30)]
        target = i % 750 == 0
        if target:
            lines[15] = f"x = needle_{i}_here"
        name = f"mod{i:05d}_target.json" if target else f"mod{i:05d}.py"
        (directory / name).write_text("\n".join(lines) + "\n")
    marker.touch()


def cpu_now() -> float:
    """CPU seconds of this process (all threads) plus its reaped children (rg, fd)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds for one run of ``argv`` with stdout read whole from a pipe (never
    /dev/null, where rg would stop at the first match)."""
    started, cpu = time.perf_counter(), cpu_now()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started, cpu_now() - cpu


def floors(tree: Path) -> dict[str, list[str]]:
    rg = str(find_rg())
    walk = ["--hidden", "--glob=!.git", "--no-require-git"]
    grep = [rg, "--no-config", "--null", "--with-filename", "--line-number", "--no-heading",
            "--color=never", "--no-context-separator", "--max-columns=2048", "--max-columns-preview"]
    commands = {
        "grep: rg (parallel)": [*grep, *walk, "--", GREP_PATTERN, "."],
        "grep: rg --sort=path": [*grep, *walk, "--sort=path", "--", GREP_PATTERN, "."],
        "find: rg --files -g": [rg, "--no-config", "--files", "--null", *walk, "-g", FIND_PATTERN, str(tree)],
        "find: rg --files": [rg, "--no-config", "--files", "--null", *walk, "--", str(tree)],
        "find: rg --files -j1 .": [rg, "--no-config", "--files", "--null", "--threads=1", *walk, "--", "."],
    }
    fd = shutil.which("fdfind") or shutil.which("fd")
    if fd:
        commands["find: fd (Pi's args)"] = [
            fd, "--glob", "--color=never", "--hidden", "--max-results", "1000", "--", FIND_PATTERN, str(tree)
        ]
    return commands


async def time_tool(tool: Any, args: dict[str, Any], expected: int) -> tuple[float, float]:
    model = tool.args_model.model_validate(args)
    started, cpu = time.perf_counter(), cpu_now()
    result = await tool.execute(model, ToolContext("bench"))
    elapsed, used = time.perf_counter() - started, cpu_now() - cpu
    text = result.content[0].text
    assert text.count("\n") + 1 == expected, text[:300]
    return elapsed, used


def peer_ms(trees: dict[int, Path]) -> dict[str, float] | None:
    """One peer process: a warm-up call then grep and find on each tree; ``None`` without a peer."""
    try:
        from tests.peer import peer_dir, run_peer

        peer = peer_dir()
    except BaseException as exc:  # noqa: BLE001 - pytest's skip is a BaseException
        print(f"(Pi peer unavailable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
        return None
    requests = [{"cwd": str(trees[SIZES[0]]), "toolCall": {"id": "warm", "name": "find", "arguments": {"pattern": "x"}}}]
    for size, tree in trees.items():
        requests.append({"cwd": str(tree), "toolCall": {"id": f"grep {size}", "name": "grep", "arguments": {"pattern": GREP_PATTERN}}})
        requests.append({"cwd": str(tree), "toolCall": {"id": f"find {size}", "name": "find", "arguments": {"pattern": FIND_PATTERN}}})
    answers = run_peer(peer, requests)
    return {a["id"]: float(a["ms"]) / 1000 for a in answers[1:] if not a["isError"]}


async def run(rounds: int, root: Path) -> None:
    trees = {size: root / f"tree{size}" for size in SIZES}
    for size, tree in trees.items():
        build_tree(tree, size)
    times: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        times.setdefault(key, []).append(value)

    tools = {
        size: (GrepTool(ToolEnvironment(cwd=tree, files=LocalFileAccess(), temp_dir=tree)),
               FindTool(ToolEnvironment(cwd=tree, files=LocalFileAccess(), temp_dir=tree)))
        for size, tree in trees.items()
    }
    print(f"load average before: {os.getloadavg()} (cpus: {os.cpu_count()})")
    for round_index in range(rounds + 1):  # round 0 warms the page cache and is dropped
        for size, tree in trees.items():
            grep_tool, find_tool = tools[size]
            expected = size // 750
            measured = {name: timed(argv, tree) for name, argv in floors(tree).items()}
            measured["grep: pi-lsp"] = await time_tool(grep_tool, {"pattern": GREP_PATTERN}, expected)
            measured["find: pi-lsp"] = await time_tool(find_tool, {"pattern": FIND_PATTERN}, expected)
            if round_index:
                for name, (wall, cpu) in measured.items():
                    add(f"{name} @{size}", wall)
                    add(f"cpu {name} @{size}", cpu)
        pi = peer_ms(trees) if round_index else None
        for key, value in (pi or {}).items():
            tool, size = key.split()
            add(f"{tool}: Pi @{size}", value)
    print(f"load average after:  {os.getloadavg()}")
    print(f"{rounds} rounds, medians (ms), wall and CPU (this process and its children):")
    median = {key: statistics.median(values) for key, values in times.items()}
    for key in sorted(k for k in median if not k.startswith("cpu ")):
        cpu = median.get(f"cpu {key}")
        print(f"  {key:32s} {median[key] * 1000:8.1f}" + (f"   cpu {cpu * 1000:8.1f}" if cpu else ""))
    for size in SIZES:
        print(f"{size} files:")
        ours = median[f"grep: pi-lsp @{size}"]
        line = f"  grep: x{ours / median[f'grep: rg (parallel) @{size}']:.2f} floor (rg parallel)"
        line += f", x{ours / median[f'grep: rg --sort=path @{size}']:.2f} rg --sort=path"
        if f"grep: Pi @{size}" in median:
            line += f", x{ours / median[f'grep: Pi @{size}']:.2f} Pi"
        print(line)
        ours = median[f"find: pi-lsp @{size}"]
        line = f"  find: x{ours / median[f'find: rg --files -g @{size}']:.2f} rg --files -g"
        if f"find: fd (Pi's args) @{size}" in median:
            line += f", x{ours / median[f'find: fd (Pi' + chr(39) + f's args) @{size}']:.2f} fd"
        line += f", x{ours / median[f'find: rg --files @{size}']:.2f} rg --files (whole listing)"
        line += f", x{ours / median[f'find: rg --files -j1 . @{size}']:.2f} rg --files -j1 ."
        if f"find: Pi @{size}" in median:
            line += f", x{ours / median[f'find: Pi @{size}']:.2f} Pi"
        print(line)
    print("goals (issue 21: <= 1.0x Pi, <= 1.15x the floor; floors: rg parallel for grep, fd for find):")
    for size in SIZES:
        for tool, floor in (("grep", "grep: rg (parallel)"), ("find", "find: fd (Pi's args)")):
            ours = median[f"{tool}: pi-lsp @{size}"]
            parts = [_verdict(ours / median[f"{floor} @{size}"], 1.15, "the floor")] if f"{floor} @{size}" in median else []
            if f"{tool}: Pi @{size}" in median:
                parts.append(_verdict(ours / median[f"{tool}: Pi @{size}"], 1.0, "Pi"))
            print(f"  {tool} at {size} files: " + ", ".join(parts or ["no floor or Pi measured"]))
    print("CPU: pi-lsp over its floor (rg parallel for grep, rg --files for find):")
    for size in SIZES:
        grep_cpu = median[f"cpu grep: pi-lsp @{size}"] / median[f"cpu grep: rg (parallel) @{size}"]
        find_cpu = median[f"cpu find: pi-lsp @{size}"] / median[f"cpu find: rg --files @{size}"]
        print(f"  {size} files: grep x{grep_cpu:.2f}, find x{find_cpu:.2f}")
    print("cost per 10x of input (30,000-file median / 3,000-file median):")
    for name in ("grep: pi-lsp", "grep: rg (parallel)", "grep: Pi", "find: pi-lsp", "find: rg --files -g",
                 "find: fd (Pi's args)", "find: Pi"):
        small, big = median.get(f"{name} @{SIZES[0]}"), median.get(f"{name} @{SIZES[1]}")
        if small and big:
            print(f"  {name:24s} x{big / small:.1f}")


def _verdict(ratio: float, goal: float, against: str) -> str:
    """``x0.95 Pi (meets <= 1.0x)``: one ratio against its goal, in the words bench_goals.py collects."""
    return f"x{ratio:.2f} {against} ({'meets' if ratio <= goal else 'MISSES'} <= {goal}x)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "pi-lsp-bench-search-scale")
    options = parser.parse_args()
    asyncio.run(run(options.rounds, options.root))


if __name__ == "__main__":
    main()
