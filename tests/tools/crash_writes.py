"""Helper process for tests/tools/test_write_crashes.py: kill -9 writes at aimed and random moments.

Run: ``python crash_writes.py SCENARIO WORKDIR``. SCENARIO is ``grow`` or ``shrink`` (a file with a
second hard link: written in place) or ``rename`` (a plain file: temp file and rename).

For every aimed moment ``i`` it forks a writer that calls ``write_file_safely`` with a profile
hook which sends itself SIGKILL just before the ``i``-th file-system call (``os.pwrite``,
``os.fsync``, ``os.replace`` ...), so every step of the write is interrupted once; then a number of
writers are killed after a random delay instead (the kill may land inside a system call). After each
kill this process recovers the way pi-lsp does (``clean_leftovers()`` as at the next start, or a
read of that file through ``LocalFileAccess``, alternately), checks the file, writes the old bytes
back for the next round (that write must also sweep the killed write's temp files), and prints one
JSON line per kill: ``{"kill", "killed", "before", "after", "read", "records", "temps_left",
"temps"}`` where ``before``, ``after`` and ``read`` are ``old``, ``new`` or ``torn`` (the file before
recovery, after it, and what the recovering read returned), ``records`` what is left in the
recovery folder, ``temps_left`` the temp files beside the target after the kill and ``temps`` those
left once the file was written again. The last line is ``{"total", "duration_ms"}``.

Forking from this small single-threaded process keeps each round to a few milliseconds.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
import time
from pathlib import Path

from pi_lsp.tools.file_io import in_place_write
from pi_lsp.tools.file_io.in_place_write import pending_writes_dir
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.file_io.safe_write import write_file_safely
from pi_lsp.tools.leftovers import clean_leftovers

WATCHED = {
    os.open, os.close, os.pwrite, os.write, os.fsync, os.ftruncate, os.posix_fallocate,
    os.replace, os.rename, os.unlink, os.fchmod, os.fchown,
}
RANDOM_KILLS = 20


def _content(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def _writer(target: Path, data: bytes, kill_at: int, report: int) -> None:
    """The forked writer: dies at the ``kill_at``-th watched call, or reports how many it made."""
    calls = 0

    def profile(_frame: object, event: str, arg: object) -> None:
        nonlocal calls
        if event == "c_call" and arg in WATCHED:
            if calls == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            calls += 1

    sys.setprofile(profile)
    write_file_safely(target, data)
    sys.setprofile(None)
    os.write(report, f"{calls}\n".encode())
    os._exit(0)


def _state(data: bytes, old: bytes, new: bytes) -> str:
    return "old" if data == old else "new" if data == new else "torn"


def main() -> None:
    scenario, workdir = sys.argv[1], Path(sys.argv[2])
    os.environ["PI_LSP_STATE_DIR"] = str(workdir / "state")
    in_place_write.CHUNK_BYTES = 64 * 1024  # many chunks: many moments between two of them
    big, small = 1024 * 1024, 768 * 1024 + 17
    old = _content(small if scenario == "grow" else big, 1)
    new = _content(big if scenario == "grow" else small, 2)
    target = workdir / "target.bin"
    target.write_bytes(old)
    if scenario != "rename":
        os.link(target, workdir / "alias.bin")  # a second name: written in place
    read_fd, write_fd = os.pipe()

    def run(kill_at: int, delay: float | None) -> bool:
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            _writer(target, new, -1 if delay is not None else kill_at, write_fd)
        if delay is not None:
            time.sleep(delay)
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        return os.WIFSIGNALED(status)

    # a first write sets up what later ones find ready (the records folder); then one whole write
    # gives the number of watched calls and the duration of a write
    assert not run(-1, None)
    os.read(read_fd, 64)
    _restore(target, old)
    start = time.monotonic()
    assert not run(-1, None)
    duration = time.monotonic() - start
    total = int(os.read(read_fd, 64).split()[0])
    _restore(target, old)
    rng = random.Random(7)
    kills: list[tuple[int, float | None]] = [(i, None) for i in range(total)]
    kills += [(-1, rng.uniform(0, duration)) for _ in range(RANDOM_KILLS)]
    for number, (kill_at, delay) in enumerate(kills):
        killed = run(kill_at, delay)
        if not killed:
            os.read(read_fd, 64)
        before = _state(target.read_bytes(), old, new)
        read = None
        if number % 2:
            read = _state(asyncio.run(LocalFileAccess().read(target)).data, old, new)
        else:
            clean_leftovers()
        after = _state(target.read_bytes(), old, new)
        records = sorted(os.listdir(pending_writes_dir())) if pending_writes_dir().exists() else []
        left = _temps(workdir)
        _restore(target, old)  # the next write of the file: it must sweep a killed write's temp file
        print(json.dumps({
            "kill": kill_at if delay is None else f"after {delay * 1000:.1f} ms", "killed": killed,
            "before": before, "after": after, "read": read, "records": records,
            "temps_left": left, "temps": _temps(workdir),
        }), flush=True)
    print(json.dumps({"total": total, "duration_ms": duration * 1000}), flush=True)


def _temps(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".pi-tmp"))


def _restore(target: Path, old: bytes) -> None:
    """Put the old bytes back in place (the same inode, so the hard link stays) for the next round."""
    write_file_safely(target, old)
    assert target.read_bytes() == old


if __name__ == "__main__":
    main()
