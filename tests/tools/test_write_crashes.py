"""kill -9 at every step of a write leaves the old or the new bytes (issue 12, "Writes that
survive a crash"), and a read-only filesystem is reported as Node reports it.

The crashes run in ``crash_writes.py`` (a helper process that forks one writer per kill); see its
docstring. Its working folder is on a tmpfs (``/dev/shm``) when there is one: kill -9 does not lose
the page cache, so what a crash leaves is the same, and each round costs no disk flush.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.file_io.os_errors import node_style_message
from pi_lsp.tools.file_io.safe_write import write_file_safely

REPO = Path(__file__).resolve().parents[2]
HELPER = Path(__file__).with_name("crash_writes.py")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork, posix_fallocate, /proc")


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="pi-lsp-crash-", dir=shm))
        yield folder
        shutil.rmtree(folder, ignore_errors=True)
    else:
        yield tmp_path


def _crash_rounds(scenario: str, workdir: Path) -> tuple[list[dict], dict]:
    done = subprocess.run(
        [sys.executable, str(HELPER), scenario, str(workdir)], cwd=REPO, capture_output=True, text=True,
        timeout=600, env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(workdir)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return lines[:-1], lines[-1]


@linux_only
@pytest.mark.parametrize("scenario", ["grow", "shrink"])
def test_kill_9_at_every_step_of_an_in_place_write_leaves_old_or_new_bytes(scenario: str, workdir: Path) -> None:
    rounds, summary = _crash_rounds(scenario, workdir)
    assert summary["total"] > 20 and len(rounds) == summary["total"] + 20
    bad = [r for r in rounds if r["after"] not in ("old", "new") or r["read"] == "torn" or r["records"]]
    assert bad == [], bad
    # the crashes really hit the write: some left a torn file that only the recovery repaired
    assert any(r["before"] == "torn" and r["read"] == "old" for r in rounds)  # the next read
    assert any(r["before"] == "torn" and r["read"] is None and r["after"] == "old" for r in rounds)  # next start
    assert {r["after"] for r in rounds} == {"old", "new"}
    assert all(r["killed"] for r in rounds if isinstance(r["kill"], int))


@linux_only
def test_kill_9_at_every_step_of_a_rename_write_and_the_temp_files_it_leaves(workdir: Path) -> None:
    rounds, summary = _crash_rounds("rename", workdir)
    assert all(r["before"] in ("old", "new") for r in rounds), rounds
    assert any(r["temps_left"] for r in rounds)  # killed writes left their temp file beside it ...
    assert all(r["temps"] == [] for r in rounds)  # ... and the next write of that file removed it


def test_the_sweep_keeps_a_temp_file_whose_writer_still_runs(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")
    stale = tmp_path / ".f.txt.0123456789ab.pi-tmp"
    stale.write_text("from a killed write")
    live = tmp_path / ".f.txt.ba9876543210.pi-tmp"
    live.write_text("being written")
    other = tmp_path / ".g.txt.0123456789ab.pi-tmp"  # another file's: not this write's business
    other.write_text("x")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'rb'); fcntl.flock(f, fcntl.LOCK_EX);"
         " print('locked', flush=True); sys.stdin.read()", str(live)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        write_file_safely(target, b"new")
        assert not stale.exists() and live.exists() and other.exists()
        assert target.read_bytes() == b"new"
    finally:
        holder.kill()
        holder.wait()


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A folder holding ``f.txt``, bind-mounted read-only (needs root and mount rights)."""
    source, mounted = tmp_path / "source", tmp_path / "ro"
    source.mkdir()
    mounted.mkdir()
    (source / "f.txt").write_text("keep me\n")
    steps = [["mount", "--bind", str(source), str(mounted)], ["mount", "-o", "remount,bind,ro", str(mounted)]]
    problem = None
    if shutil.which("mount") is None or os.geteuid() != 0:
        problem = "a read-only mount needs root and mount(8)"
    else:
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                problem = f"{' '.join(step)} failed: {done.stderr.strip()}"
                break
    if problem is not None:
        subprocess.run(["umount", str(mounted)], capture_output=True)
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must test a real read-only filesystem: {problem}")
        pytest.skip(f"no read-only filesystem to test with: {problem}")
    try:
        yield mounted
    finally:
        subprocess.run(["umount", str(mounted)], capture_output=True)


@linux_only
async def test_a_read_only_filesystem_is_erofs_in_nodes_words(read_only_mount: Path) -> None:
    existing, new = read_only_mount / "f.txt", read_only_mount / "new.txt"
    # Node: fs.writeFile -> "EROFS: read-only file system, open '<path>'" (checked with node 22)
    for path in (existing, new):
        with pytest.raises(OSError) as caught:
            write_file_safely(path, b"x")
        assert node_style_message(caught.value, "open") == f"EROFS: read-only file system, open '{path}'"
    # Pi's edit checks fs.access(R_OK | W_OK) first: "EROFS: read-only file system, access '<path>'"
    with pytest.raises(OSError) as caught:
        await LocalFileAccess().access(existing, write=True)
    assert node_style_message(caught.value, "access") == f"EROFS: read-only file system, access '{existing}'"
    await LocalFileAccess().access(existing)  # reading is fine
    assert existing.read_text() == "keep me\n"
    # a deliberate difference (docs/differences.md): Node's recursive mkdir says ENOENT here
    with pytest.raises(OSError) as caught:
        write_file_safely(read_only_mount / "sub" / "deeper" / "new.txt", b"x")
    message = node_style_message(caught.value, "open")
    assert message == f"EROFS: read-only file system, mkdir '{read_only_mount / 'sub'}'"
