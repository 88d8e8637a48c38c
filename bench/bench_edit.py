"""Bench: a one-line edit of a 60,000-line (about 2.8 MB) file, pi-lsp in-process vs the real Pi peer.

Target (issue 2, Speed): pi-lsp's time <= 0.5x the peer's on the same file (the peer takes about
66 ms here). Both sides do the whole call on the filesystem: resolve, access, read, match, write,
diff. The peer's time is its own ``ms`` field (lookup + prepare + validation + execute, process
start excluded); ours is ``EditTool.execute`` with ``LocalFileAccess``, timed with
``perf_counter``. Each side alternates two edits so the file stays editable.

Run: ``python3 bench/bench_edit.py`` (needs node; uses ``$PI_LSP_PEER_DIR`` or installs the peer
as the tests do). Prints medians and the ratio; never asserts.
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
from pi_lsp.tools.edit import EditArgs, EditTool  # noqa: E402
from pi_lsp.tools.environment import ToolEnvironment  # noqa: E402
from pi_lsp.tools.file_io.local_files import LocalFileAccess  # noqa: E402
from tests.peer import peer_dir, run_peer  # noqa: E402

LINES = 60_000
RUNS = 21
TARGET_RATIO = 0.5


def _content() -> str:
    return "".join(f"line {i:05d}: the quick brown fox jumps over {i}\n" for i in range(LINES))


def _edits(run: int) -> list[dict[str, str]]:
    middle = f"line {LINES // 2:05d}: the quick"
    changed = f"line {LINES // 2:05d}: THE QUICK"
    return [{"oldText": middle, "newText": changed}] if run % 2 == 0 else [{"oldText": changed, "newText": middle}]


def _peer_ms(root: Path) -> list[float]:
    requests = [
        {"cwd": str(root), "toolCall": {"id": f"e{i}", "name": "edit", "arguments": {"path": "big.txt", "edits": _edits(i)}}}
        for i in range(RUNS + 2)
    ]
    answers = run_peer(peer_dir(), requests)
    bad = [a for a in answers if a["isError"]]
    if bad:
        raise SystemExit(f"peer failed: {bad[0]['content']}")
    return [float(a["ms"]) for a in answers[2:]]  # the first two calls warm up the JIT


async def _our_ms(root: Path) -> list[float]:
    tool = EditTool(ToolEnvironment(cwd=root, files=LocalFileAccess(), temp_dir=root))
    times = []
    for i in range(RUNS + 2):
        args = EditArgs.model_validate({"path": "big.txt", "edits": _edits(i)})
        start = time.perf_counter()
        await tool.execute(args, ToolContext(tool_call_id=f"e{i}"))
        times.append((time.perf_counter() - start) * 1000)
    return times[2:]


def main() -> None:
    content = _content()
    with tempfile.TemporaryDirectory() as peer_root, tempfile.TemporaryDirectory() as our_root:
        for root in (peer_root, our_root):
            (Path(root) / "big.txt").write_text(content)
        peer = statistics.median(_peer_ms(Path(peer_root)))
        ours = statistics.median(asyncio.run(_our_ms(Path(our_root))))
        same = (Path(peer_root) / "big.txt").read_bytes() == (Path(our_root) / "big.txt").read_bytes()
    ratio = ours / peer
    print(f"file: {LINES} lines, {len(content.encode()) / 1e6:.2f} MB; {RUNS} timed one-line edits each")
    print(f"peer   median {peer:7.2f} ms")
    print(f"pi-lsp median {ours:7.2f} ms")
    verdict = "meets" if ratio <= TARGET_RATIO else "MISSES"
    print(f"ratio {ratio:.2f}x of the peer ({verdict} the <= {TARGET_RATIO}x target); final files identical: {same}")


if __name__ == "__main__":
    main()
