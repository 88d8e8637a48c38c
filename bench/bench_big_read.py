"""read of a 1 MB and a 50 MB file: pi-lsp vs its floor vs Pi, time and peak memory (issue 21).

Each measurement is a fresh process, so its peak resident memory (``ru_maxrss`` from ``wait4``)
belongs to that one read:

- floor: a bare Python process that reads the bytes, counts lines with ``bytes.count`` and
  decodes only the answer's window (the first 2000 lines / 50 KB, or the asked-for lines);
- pi-lsp: a Python process that imports pi-lsp, reads a 260 KB file once (first-call costs a
  running daemon has paid long before: lazy imports, the reading thread), then runs ``ReadTool.execute`` on the big file (its time
  is that call alone; "import base" is the peak before the calls: the interpreter plus pi-lsp);
- both report wall time and CPU time (``process_time``: all threads of the process), the latter
  steadier on a loaded machine;
- Pi (when the peer is installed): ``node pi-tools.mjs`` with one read; time is its ``ms``.

Files: lines of about 80 ASCII characters (and one ``é`` in the "utf-8" variant, which makes
pi-lsp check the whole file's UTF-8). Calls: the default (first 2000 lines) and 100 lines from the
middle. One interleaved run of several rounds; medians; load average printed; never asserts.

Run: ``python3 bench/bench_big_read.py [--rounds N] [--root DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MB = 1024 * 1024

FLOOR = r"""
import json, sys, time
path, offset, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
started, cpu = time.perf_counter(), time.process_time()
data = open(path, "rb").read()
total = data.count(b"\n") + 1
begin, skip = 0, offset - 1
while skip and data.count(b"\n", begin, begin + 65536) < skip:
    skip -= data.count(b"\n", begin, begin + 65536)
    begin += 65536
for _ in range(skip):
    begin = data.index(b"\n", begin) + 1
end = begin
for _ in range(limit):
    found = data.find(b"\n", end, begin + 51200)
    if found < 0:
        break
    end = found + 1
text = data[begin:end].decode("utf-8")
print(json.dumps({"s": time.perf_counter() - started, "cpu": time.process_time() - cpu, "chars": len(text)}))
"""

OURS = r"""
import asyncio, json, resource, sys, time
sys.path.insert(0, sys.argv[4])
from pathlib import Path
from pi_lsp.agent.tool import ToolContext
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.read import ReadArgs, ReadTool
path, offset, limit = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
tool = ReadTool(ToolEnvironment(cwd=path.parent, files=LocalFileAccess(), temp_dir=path.parent))
args = ReadArgs(path=path.name, offset=offset if offset > 1 else None, limit=limit if offset > 1 else None)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
async def main():
    await tool.execute(ReadArgs(path="warm.txt"), ToolContext("warm"))  # first-call costs
    started, cpu = time.perf_counter(), time.process_time()
    result = await tool.execute(args, ToolContext("bench"))
    return time.perf_counter() - started, time.process_time() - cpu, result
elapsed, cpu, result = asyncio.run(main())
print(json.dumps({"s": elapsed, "cpu": cpu, "base_kb": base, "chars": len(result.content[0].text)}))
"""


def make_file(path: Path, size: int, non_ascii: bool) -> None:
    if path.exists() and path.stat().st_size >= size:
        return
    line = "def function_%07d(argument): return argument * 2  # some ordinary source text\n"
    with open(path, "w", encoding="utf-8") as out:
        written = 0
        number = 0
        while written < size:
            text = line % number
            if non_ascii and number == 1000:
                text = text.replace("some", "sómé")
            out.write(text)
            written += len(text.encode("utf-8"))
            number += 1


def run_reaped(argv: list[str], stdin: str | None = None) -> tuple[dict[str, Any], int]:
    """Run one process, reaped with ``wait4``: its JSON answer and its peak resident memory (KB)."""
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(REPO),
    )
    if stdin is not None:
        assert process.stdin is not None
        process.stdin.write(stdin.encode())
        process.stdin.close()
    assert process.stdout is not None and process.stderr is not None
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed: {err.decode(errors='replace')[-2000:]}")
    return json.loads(out.decode().strip().splitlines()[-1]), usage.ru_maxrss


def _count_lines(path: Path) -> int:
    """Lines as read counts them, without holding the file (a child inherits this process's
    resident size at fork, and ``ru_maxrss`` keeps it across ``exec``)."""
    count = 1
    with open(path, "rb") as handle:
        while piece := handle.read(MB):
            count += piece.count(b"\n")
    return count


def peer() -> Path | None:
    try:
        from tests.peer import peer_dir

        return peer_dir()
    except BaseException as exc:  # noqa: BLE001 - pytest's skip is a BaseException
        print(f"(Pi peer unavailable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "pi-lsp-bench-big-read")
    options = parser.parse_args()
    options.root.mkdir(parents=True, exist_ok=True)
    files = {
        "1 MB": (options.root / "one.txt", 1 * MB, False),
        "50 MB": (options.root / "fifty.txt", 50 * MB, False),
        "50 MB utf-8": (options.root / "fifty-utf8.txt", 50 * MB, True),
    }
    for path, size, non_ascii in files.values():
        make_file(path, size, non_ascii)
    # above LocalFileAccess's inline size, so the warm-up also starts the reading thread
    (options.root / "warm.txt").write_text("warm up line\n" * 20_000)
    peer_path = peer()
    calls = {"head": (1, 0), "middle 100": (None, 100)}
    samples: dict[str, list[tuple[float, int]]] = {}
    base_kb: list[int] = []
    print(f"load average before: {os.getloadavg()} (cpus: {os.cpu_count()})")
    for _ in range(options.rounds):
        for label, (path, size, _) in files.items():
            lines = _count_lines(path)
            for call, (offset, limit) in calls.items():
                start = offset or lines // 2
                count = limit or 2000
                key = f"{label}, {call}"
                floor, floor_kb = run_reaped([sys.executable, "-c", FLOOR, str(path), str(start), str(count)])
                ours, ours_kb = run_reaped(
                    [sys.executable, "-c", OURS, str(path), str(start), str(count), str(REPO)]
                )
                base_kb.append(ours["base_kb"])
                samples.setdefault(f"{key} | floor", []).append((floor["s"], floor_kb))
                samples.setdefault(f"{key} | pi-lsp", []).append((ours["s"], ours_kb))
                samples.setdefault(f"{key} | floor cpu", []).append((floor["cpu"], floor_kb))
                samples.setdefault(f"{key} | pi-lsp cpu", []).append((ours["cpu"], ours_kb))
                if peer_path is not None:
                    arguments: dict[str, Any] = {"path": str(path)}
                    if offset is None:
                        arguments.update(offset=start, limit=count)
                    request = json.dumps({"cwd": str(path.parent), "toolCall": {"id": "r", "name": "read", "arguments": arguments}})
                    answer, pi_kb = _peer_read(peer_path, request)
                    samples.setdefault(f"{key} | Pi", []).append((answer["ms"] / 1000, pi_kb))
    print(f"load average after:  {os.getloadavg()}")
    print(f"{options.rounds} rounds; medians; pi-lsp's import base (interpreter + pi-lsp): {statistics.median(base_kb) / 1024:.0f} MB")
    medians = {
        key: (statistics.median(s for s, _ in values), statistics.median(kb for _, kb in values))
        for key, values in samples.items()
    }
    for label in files:
        for call in calls:
            key = f"{label}, {call}"
            floor_s, floor_kb = medians[f"{key} | floor"]
            ours_s, ours_kb = medians[f"{key} | pi-lsp"]
            line = (
                f"  {key:24s} floor {floor_s * 1000:7.1f} ms {floor_kb / 1024:6.0f} MB | "
                f"pi-lsp {ours_s * 1000:7.1f} ms {ours_kb / 1024:6.0f} MB "
                f"(x{ours_s / floor_s:.2f} time, x{ours_kb / floor_kb:.2f} memory)"
            )
            floor_cpu, ours_cpu = medians[f"{key} | floor cpu"][0], medians[f"{key} | pi-lsp cpu"][0]
            line += f" | CPU floor {floor_cpu * 1000:.1f} ms, pi-lsp {ours_cpu * 1000:.1f} ms (x{ours_cpu / floor_cpu:.2f})"
            if f"{key} | Pi" in medians:
                pi_s, pi_kb = medians[f"{key} | Pi"]
                line += f" | Pi {pi_s * 1000:7.1f} ms {pi_kb / 1024:6.0f} MB (pi-lsp x{ours_s / pi_s:.2f} time)"
            print(line)
    print("goals (issue 21: a 50 MB read within 2x the floor in time and in memory):")
    for key in (f"{label}, {call}" for label in files if label.startswith("50 MB") for call in calls):
        if f"{key} | floor" in medians:
            (floor_s, floor_kb), (ours_s, ours_kb) = medians[f"{key} | floor"], medians[f"{key} | pi-lsp"]
            time_ratio, memory_ratio = ours_s / floor_s, ours_kb / floor_kb
            verdict = "meets" if max(time_ratio, memory_ratio) <= 2.0 else "MISSES"
            print(f"  read {key}: x{time_ratio:.2f} time, x{memory_ratio:.2f} memory of the floor ({verdict} <= 2.0x)")
    print("cost per 10x of input (50 MB median / 1 MB median, i.e. per 50x, shown per 10x):")
    for who in ("floor", "pi-lsp", "Pi"):
        small = medians.get(f"1 MB, head | {who}")
        big = medians.get(f"50 MB, head | {who}")
        if small and big:
            per_10x = (big[0] / small[0]) ** (1 / 1.69897)
            print(f"  {who:7s} time x{per_10x:.1f} per 10x (head)")


def _peer_read(peer_path: Path, request: str) -> tuple[dict[str, Any], int]:
    process = subprocess.Popen(
        ["node", "pi-tools.mjs"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, cwd=str(peer_path),
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.stdin.write((request + "\n").encode())
    process.stdin.close()
    out = process.stdout.read()
    process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    answer = json.loads(out.decode().strip().splitlines()[-1])
    if answer.get("isError"):
        raise RuntimeError(f"peer read failed: {answer['content']}")
    return answer, usage.ru_maxrss


if __name__ == "__main__":
    main()
