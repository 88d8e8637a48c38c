"""Bench: the change journal's bash snapshot on 30,000 files (issue 18).

Prints, from one run (medians of 5): the stat walk alone; the first snapshot of a session (stat walk
plus reading every file into the blob store once); a later snapshot (stat walk plus the cache
check); the floor, ``os.walk`` + ``os.stat`` of every file; and ``bash -c true``'s start-up, the
cost of the smallest command the snapshot brackets. Never asserts.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from pi_lsp.changes.blobs import BlobStore
from pi_lsp.changes.journal import ChangeJournal
from pi_lsp.changes.workspace_scan import WorkspaceScanner, stat_walk

FILES = 30_000


def _median_ms(fn, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        for i in range(FILES):
            d = root / f"pkg{i // 300}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"m{i}.py").write_text(f"value = {i}\n" * 20)
        journal = ChangeJournal(Path(tmp) / "j", BlobStore(Path(tmp) / "b"))
        scanner = WorkspaceScanner(journal, lambda: [root])
        start = time.perf_counter()
        scanner.snapshot()
        first = (time.perf_counter() - start) * 1000
        later = _median_ms(scanner.snapshot)
        walk = _median_ms(lambda: stat_walk([root], frozenset()))
        floor = _median_ms(lambda: [os.stat(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs])
        bash = _median_ms(lambda: subprocess.run(["bash", "-c", "true"], check=True), runs=21)
        print(f"load average {os.getloadavg()[0]:.1f}; {FILES} files")
        print(f"floor (os.walk + stat): {floor:7.1f} ms")
        print(f"stat walk:              {walk:7.1f} ms ({walk / floor:.2f}x floor)")
        print(f"later snapshot:         {later:7.1f} ms ({later / floor:.2f}x floor)")
        print(f"first snapshot:         {first:7.1f} ms (reads every file once per session)")
        print(f"bash -c true:           {bash:7.1f} ms (a later snapshot is {later / bash:.1f}x a bare bash start)")


if __name__ == "__main__":
    main()
