"""Bench: a small read and a small write, pi-lsp in-process vs the real Pi peer.

The peer's time is its own ``ms`` field (lookup, validation, execute; process start excluded); ours
is ``ReadTool.execute`` / ``WriteTool.execute`` with ``LocalFileAccess``, timed with
``perf_counter``. Read: 20 lines from the middle of a 500-line file. Write: a 1 KB file, replaced
each run. pi-lsp's write fsyncs the file and its directory (design.md section 7: safe writes), which
the peer does not, so its write is expected to be slower by the cost of two fsyncs on this disk.

Run: ``python3 bench/bench_read_write.py`` (needs node; uses ``$PI_LSP_PEER_DIR`` or installs the
peer as the tests do). Prints medians and ratios; never asserts.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pi_lsp.agent.tool import ToolContext  # noqa: E402
from pi_lsp.tools.environment import ToolEnvironment  # noqa: E402
from pi_lsp.tools.file_io.local_files import LocalFileAccess  # noqa: E402
from pi_lsp.tools.read import ReadArgs, ReadTool  # noqa: E402
from pi_lsp.tools.write import WriteArgs, WriteTool  # noqa: E402
from tests.peer import peer_dir, run_peer  # noqa: E402

RUNS = 50
WARMUP = 10
READ_ARGS = {"path": "a.txt", "offset": 240, "limit": 20}
WRITE_ARGS = {"path": "out/b.txt", "content": "x" * 1023 + "\n"}


def _peer_ms(root: Path, name: str, arguments: dict[str, object]) -> list[float]:
    requests = [
        {"cwd": str(root), "toolCall": {"id": f"c{i}", "name": name, "arguments": arguments}}
        for i in range(RUNS + WARMUP)
    ]
    answers = run_peer(peer_dir(), requests)
    if any(a["isError"] for a in answers):
        raise SystemExit(f"peer failed: {answers[0]['content']}")
    return [float(a["ms"]) for a in answers[WARMUP:]]


async def _our_ms(root: Path) -> tuple[list[float], list[float]]:
    env = ToolEnvironment(cwd=root, files=LocalFileAccess(), temp_dir=root)
    read, write = ReadTool(env), WriteTool(env)
    results: list[list[float]] = []
    for call in (
        lambda: read.execute(ReadArgs(**READ_ARGS), ToolContext(tool_call_id="r")),
        lambda: write.execute(WriteArgs(**WRITE_ARGS), ToolContext(tool_call_id="w")),
    ):
        times = []
        for i in range(RUNS + WARMUP):
            start = time.perf_counter()
            await call()
            times.append((time.perf_counter() - start) * 1000)
        results.append(times[WARMUP:])
    return results[0], results[1]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a.txt").write_text("".join(f"line {i}: some text here\n" for i in range(500)))
        peer_read = statistics.median(_peer_ms(root, "read", READ_ARGS))
        peer_write = statistics.median(_peer_ms(root, "write", WRITE_ARGS))
        ours_read, ours_write = (statistics.median(t) for t in asyncio.run(_our_ms(root)))
    print(f"read  20 lines: pi-lsp {ours_read:.3f} ms, peer {peer_read:.3f} ms, ratio {ours_read / peer_read:.2f}")
    print(f"write 1 KB:     pi-lsp {ours_write:.3f} ms, peer {peer_write:.3f} ms, ratio {ours_write / peer_write:.2f}")


if __name__ == "__main__":
    main()
