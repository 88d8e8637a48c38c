"""Bench: the change journal's bash snapshot on 30,000 files (issue 18).

Prints, from one run (medians of 5): the floor, ``os.walk`` + ``os.stat`` of every file; the stat
walk alone; then, in a plain folder and in a git work tree with every file committed and clean, the
first snapshot of a session (without git: stat walk plus copying every file into the blob store;
with git: stat walk plus reading the index, copying nothing) and a later one (stat walk plus the
cache check), each with its ratio to the floor; and ``bash -c true``'s start-up, the cost of the
smallest command the snapshot brackets. Then, with the inotify watch (:mod:`pi_lsp.changes.dir_watch`),
the cycle of one command: the snapshot before it (the last one plus what changed since: here the
user saved one file), the snapshot after it that the command's result waits for (the same, from
what inotify reported during the command), with their ratios to ``bash -c true`` and the floor,
and the confirmation walk that follows in the background (a full stat walk finding writes through
a shared mmap). All of it for 3,000 and for 30,000 files. Never asserts.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from pi_lsp.changes.blobs import BlobStore
from pi_lsp.changes.git_index import GitIndex
from pi_lsp.changes.journal import ChangeJournal
from pi_lsp.changes.workspace_scan import WorkspaceScanner, stat_walk

SIZES = (3_000, 30_000)


def _median_ms(fn, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _command_cycle(scanner: WorkspaceScanner, root: Path) -> tuple[float, float, float]:
    """Medians (ms) of one command's cycle: the snapshot before it (after the user saved one
    file), the snapshot after it (the command changed one file) that its result waits for, and
    the confirmation walk that follows in the background."""
    befores, afters, confirms = [], [], []
    scanner.snapshot()
    for i in range(7):
        (root / "pkg0" / "m0.py").write_text(f"user {i}\n")  # the user saves a file
        start = time.perf_counter()
        command = scanner.begin_command()
        befores.append((time.perf_counter() - start) * 1000)
        (root / "pkg1" / "m300.py").write_text(f"command {i}\n")  # the command changes one
        start = time.perf_counter()
        changes, owed = scanner.after_command(command)
        afters.append((time.perf_counter() - start) * 1000)
        assert owed and [Path(path).name for path, _, _ in changes] == ["m300.py"]
        start = time.perf_counter()
        scanner.confirm(command)
        confirms.append((time.perf_counter() - start) * 1000)
    return statistics.median(befores), statistics.median(afters), statistics.median(confirms)


def _first_and_later(scanner: WorkspaceScanner) -> tuple[float, float]:
    start = time.perf_counter()
    scanner.snapshot()
    first = (time.perf_counter() - start) * 1000
    return first, _median_ms(scanner.snapshot)


def run(files: int) -> None:
    """Every figure for a workspace of ``files`` files."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        for i in range(files):
            d = root / f"pkg{i // 300}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"m{i}.py").write_text(f"value = {i}\n" * 20)
        walk = _median_ms(lambda: stat_walk([root], frozenset()))
        floor = _median_ms(lambda: [os.stat(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs])
        bash = _median_ms(lambda: subprocess.run(["bash", "-c", "true"], check=True), runs=21)
        # not a git work tree: every file is copied into the blob store once per session
        journal = ChangeJournal(Path(tmp) / "j", BlobStore(Path(tmp) / "b"))
        copy_first, copy_later = _first_and_later(WorkspaceScanner(journal, lambda: [root], watch=False))
        # a git work tree with every file committed and clean: nothing is copied
        time.sleep(1.1)  # files older than the index, as in a real tree (not "racily clean")
        git = ["git", "-c", "user.email=b@example.com", "-c", "user.name=b"]
        for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "bench"]):
            subprocess.run([*git, *args], cwd=root, check=True, capture_output=True)
        journal = ChangeJournal(Path(tmp) / "j2", BlobStore(Path(tmp) / "b2"))
        git_first, git_later = _first_and_later(WorkspaceScanner(journal, lambda: [root], git=GitIndex(), watch=False))
        watched = WorkspaceScanner(journal, lambda: [root], git=GitIndex())
        watched_before, watched_after, confirm = _command_cycle(watched, root)
        print(f"load average {os.getloadavg()[0]:.1f}; {files} files")
        print(f"floor (os.walk + stat):       {floor:8.1f} ms")
        print(f"stat walk:                    {walk:8.1f} ms ({walk / floor:.2f}x floor)")
        print(f"no git, first snapshot:       {copy_first:8.1f} ms ({copy_first / floor:.2f}x floor; copies every file)")
        print(f"no git, later snapshot:       {copy_later:8.1f} ms ({copy_later / floor:.2f}x floor)")
        print(f"git tree, first snapshot:     {git_first:8.1f} ms ({git_first / floor:.2f}x floor; reads the index, copies nothing)")
        print(f"git tree, later snapshot:     {git_later:8.1f} ms ({git_later / floor:.2f}x floor)")
        print(f"bash -c true:                 {bash:8.1f} ms (a later snapshot is {git_later / bash:.1f}x a bare bash start)")
        print(f"watched, before a command:    {watched_before:8.2f} ms ({watched_before / bash:.3f}x bash -c true, "
              f"{watched_before / floor:.4f}x floor; {watched.full_walks} full walks in {1 + 2 * 7} snapshots)")
        print(f"watched, after a command:     {watched_after:8.2f} ms ({watched_after / bash:.3f}x bash -c true, "
              f"{watched_after / floor:.4f}x floor; what the command's result waits for)")
        print(f"confirmation walk:            {confirm:8.1f} ms ({confirm / bash:.1f}x bash -c true, "
              f"{confirm / floor:.2f}x floor; in the background, after the result)")


def main() -> None:
    for files in SIZES:
        run(files)
        print()


if __name__ == "__main__":
    main()
