"""Session temp folders: owner records and the sweep of stale ones (issue 12)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_lsp.tools.process_identity import current_identity, owner_alive
from pi_lsp.tools.session_temp import OWNER_FILE, create_session_temp, sweep_stale_session_temps

REPO = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _folder(root: Path, name: str, owner: object | None) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "spill.log").write_text("output")
    if owner is not None:
        (folder / OWNER_FILE).write_text(json.dumps(owner))
    return folder


def test_a_new_folder_is_private_and_names_this_process_as_owner(tmp_path: Path) -> None:
    folder = create_session_temp("pi-lsp-exec-", root=tmp_path)
    assert folder.name.startswith("pi-lsp-exec-") and folder.stat().st_mode & 0o777 == 0o700
    assert json.loads((folder / OWNER_FILE).read_text()) == current_identity()
    assert owner_alive(current_identity())


@linux_only
def test_only_folders_whose_owner_is_gone_are_removed(tmp_path: Path) -> None:
    me = current_identity()
    done = subprocess.run(  # a real process that made its folder and ended without removing it
        [sys.executable, "-c", "import sys; from pi_lsp.tools.session_temp import create_session_temp;"
         " print(create_session_temp(root=sys.argv[1]))", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, check=True,
    )
    ended = Path(done.stdout.strip())
    reused = _folder(tmp_path, "pi-lsp-reused", {**me, "start": me["start"] + 1})  # our pid, another process
    rebooted = _folder(tmp_path, "pi-lsp-rebooted", {**me, "boot": "another-boot"})
    mine = _folder(tmp_path, "pi-lsp-mine", me)
    unrecorded = _folder(tmp_path, "pi-lsp-unrecorded", None)
    garbled = tmp_path / "pi-lsp-garbled"
    garbled.mkdir()
    (garbled / OWNER_FILE).write_text("{not json")
    unrelated = _folder(tmp_path, "other-tool-1", {**me, "start": me["start"] + 1})
    target = _folder(tmp_path, "target", None)
    (tmp_path / "pi-lsp-link").symlink_to(target)  # a symlink is never followed or removed
    removed = [stale.folder for stale in sweep_stale_session_temps(tmp_path)]
    assert sorted(removed) == sorted([ended, reused, rebooted])
    assert not any(path.exists() for path in removed)
    for kept in (mine, unrecorded, garbled, unrelated, target, tmp_path / "pi-lsp-link"):
        assert kept.exists(), kept


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a folder away")
def test_another_users_folder_is_never_touched(tmp_path: Path) -> None:
    theirs = _folder(tmp_path, "pi-lsp-theirs", {"pid": 2**22 + 7, "start": 1, "boot": None})
    os.chown(theirs, 65534, 65534)
    assert sweep_stale_session_temps(tmp_path) == []
    assert theirs.exists()


def test_the_sweep_returns_the_process_tag_of_each_removed_session(tmp_path: Path) -> None:
    gone = {"pid": 2**22 + 11, "start": 5, "boot": None}
    _folder(tmp_path, "pi-lsp-tagged", {**gone, "processTag": "0123abcd"})
    _folder(tmp_path, "pi-lsp-untagged", gone)
    found = {stale.folder.name: stale.process_tag for stale in sweep_stale_session_temps(tmp_path)}
    assert found == {"pi-lsp-tagged": "0123abcd", "pi-lsp-untagged": None}


def test_malformed_identities_count_as_alive() -> None:
    for identity in (None, [], {"pid": "1"}, {"pid": True}, {"pid": -4}, {}):
        assert owner_alive(identity) is True
