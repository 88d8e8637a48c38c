"""The check for killed in-place writes that runs before every disk read (issue 12, issue 21).

:func:`pending_writes_waiting` trusts an earlier empty listing of a records folder only while the
folder's modification time is unchanged and was old enough when listed; whatever the check
remembers, a record a killed writer left is settled before the file is next read.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_lsp.tools.file_io import in_place_write
from pi_lsp.tools.file_io.in_place_write import SETTLED_MTIME_NS, pending_writes_dir, pending_writes_waiting
from pi_lsp.tools.file_io.local_files import LocalFileAccess


@pytest.fixture
def records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty records folder of this test's own state folder (the fallback folder is made to
    be another empty one, so nothing of other runs is seen)."""
    monkeypatch.setenv(in_place_write.STATE_DIR_ENV, str(tmp_path / "state"))
    monkeypatch.setattr(in_place_write, "_fallback_dir_name", lambda: str(tmp_path / "fallback"))
    monkeypatch.setattr(in_place_write, "_dir_names", None)
    monkeypatch.setattr(in_place_write, "_seen_empty", {})
    monkeypatch.setattr(in_place_write, "_seen_missing", set())
    folder = pending_writes_dir()
    folder.mkdir(parents=True, mode=0o700)
    return folder


def _age(folder: Path, seconds: float) -> int:
    """Set the folder's modification time ``seconds`` into the past; return it (ns)."""
    stamp = time.time_ns() - int(seconds * 1e9)
    os.utime(folder, ns=(stamp, stamp))
    return stamp


def test_a_record_added_to_a_folder_listed_empty_is_seen(records: Path) -> None:
    _age(records, 2 * SETTLED_MTIME_NS / 1e9)
    assert not pending_writes_waiting()
    assert not pending_writes_waiting()  # remembered: the folder is unchanged
    (records / "123-456-abc.json").write_text("{}")  # adding an entry stamps the folder now
    assert pending_writes_waiting()


def test_a_recently_changed_folder_is_listed_again(records: Path) -> None:
    # a coarse file-system clock can leave a recent time unchanged when a record is added
    stamp = _age(records, 0.01)
    assert not pending_writes_waiting()
    (records / "123-456-abc.json").write_text("{}")
    os.utime(records, ns=(stamp, stamp))
    assert pending_writes_waiting()


def test_a_missing_folder_holds_nothing(records: Path) -> None:
    records.rmdir()
    assert not pending_writes_waiting()
    records.mkdir()
    (records / "x.json").write_text("{}")
    assert pending_writes_waiting()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="hard links and process identities as on Linux")
def test_a_killed_write_is_settled_before_the_next_read_after_a_remembered_empty_listing(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "target.txt"
    old, new = b"old bytes " * 100, b"NEW BYTES " * 100
    target.write_bytes(old)
    _age(records, 2 * SETTLED_MTIME_NS / 1e9)
    assert asyncio.run(LocalFileAccess().read(target)).data == old  # lists the folder: empty, remembered
    # a writer that died: its record names a process that has ended
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    monkeypatch.setattr(in_place_write, "current_identity", lambda: {"pid": int(ended.stdout), "start": None, "boot": None})
    real = os.path.realpath(target)
    in_place_write._Journal.begin(real, os.stat(real), old, new)
    target.write_bytes(new[:500] + old[500:])  # torn where the kill hit it
    assert asyncio.run(LocalFileAccess().read(target)).data == old
    assert os.listdir(records) == []


def test_a_changed_state_folder_variable_is_followed_at_once(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not pending_writes_waiting()
    other = tmp_path / "other-state"
    (other / "pending-writes").mkdir(parents=True)
    (other / "pending-writes" / "x.json").write_text("{}")
    monkeypatch.setenv(in_place_write.STATE_DIR_ENV, str(other))  # os.environ changed in place
    assert pending_writes_waiting()
    monkeypatch.setenv(in_place_write.STATE_DIR_ENV, str(tmp_path / "state"))
    assert not pending_writes_waiting()


def test_a_folder_missing_at_the_last_check_is_seen_when_it_appears(records: Path, tmp_path: Path) -> None:
    fallback = tmp_path / "fallback"
    assert not fallback.exists()
    assert not pending_writes_waiting()
    assert not pending_writes_waiting()  # still missing: checked without a stat
    fallback.mkdir(mode=0o700)
    (fallback / "y.json").write_text("{}")
    assert pending_writes_waiting()
