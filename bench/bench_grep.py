"""grep speed: pi-lsp's grep vs ``rg --sort path`` on the same generated tree (issue 3).

Builds (once, cached in a temp folder) 3,000 files holding about 60 MB of text, then times, in
alternation, ``rg --sort path -- PATTERN TREE`` run directly and GrepTool.execute for the same
pattern. The pattern matches a few lines spread over the whole tree, so both scan every byte and
the tool is not helped by its match limit. Prints medians and the ratio (target <= 1.2).

Run: ``python3 bench/bench_grep.py [--rounds N] [--tree DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_lsp.agent.tool import ToolContext  # noqa: E402
from pi_lsp.tools.environment import ToolEnvironment  # noqa: E402
from pi_lsp.tools.grep import GrepTool  # noqa: E402
from pi_lsp.tools.file_io.local_files import LocalFileAccess  # noqa: E402
from pi_lsp.tools.search.ripgrep import find_rg  # noqa: E402

FILES = 3_000
TOTAL_BYTES = 60 * 1024 * 1024
PATTERN = "needle_[0-9]+_here"
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def build_tree(root: Path) -> None:
    """3,000 files in 30 directories, ~20 KB each, one in 50 holding a needle line."""
    marker = root / ".complete"
    if marker.exists():
        return
    rng = random.Random(7)
    per_file = TOTAL_BYTES // FILES
    for i in range(FILES):
        directory = root / f"pkg{i % 30:02d}"
        directory.mkdir(parents=True, exist_ok=True)
        lines: list[str] = []
        size = 0
        while size < per_file:
            line = " ".join(rng.choice(WORDS) for _ in range(12))
            lines.append(line)
            size += len(line) + 1
        if i % 50 == 0:
            lines[len(lines) // 2] = f"x = needle_{i}_here"
        (directory / f"mod{i:04d}.py").write_text("\n".join(lines) + "\n")
    marker.touch()


def time_rg(tree: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [str(find_rg()), "--sort", "path", "--", PATTERN, str(tree)],
        stdout=subprocess.DEVNULL, check=True,
    )
    return time.perf_counter() - started


async def time_tool(tool: GrepTool, tree: Path) -> float:
    args = tool.args_model.model_validate({"pattern": PATTERN, "path": str(tree)})
    started = time.perf_counter()
    result = await tool.execute(args, ToolContext("bench"))
    elapsed = time.perf_counter() - started
    assert result.content[0].text.count("needle_") == FILES // 50, result.content[0].text[:200]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tree", type=Path, default=Path(tempfile.gettempdir()) / "pi-lsp-bench-grep")
    options = parser.parse_args()
    build_tree(options.tree)
    size = sum(f.stat().st_size for f in options.tree.rglob("*.py"))
    tool = GrepTool(ToolEnvironment(cwd=options.tree, files=LocalFileAccess(), temp_dir=options.tree))
    rg_times: list[float] = []
    tool_times: list[float] = []
    time_rg(options.tree)  # warm the page cache
    for _ in range(options.rounds):
        rg_times.append(time_rg(options.tree))
        tool_times.append(asyncio.run(time_tool(tool, options.tree)))
    rg_median = statistics.median(rg_times)
    tool_median = statistics.median(tool_times)
    print(f"tree: {FILES} files, {size / 1e6:.1f} MB at {options.tree} (cpus: {os.cpu_count()})")
    print(f"rg --sort path: median {rg_median * 1000:.1f} ms")
    print(f"pi-lsp grep:    median {tool_median * 1000:.1f} ms")
    print(f"ratio: {tool_median / rg_median:.2f} (target <= 1.2)")


if __name__ == "__main__":
    main()
