"""The pi/diagnosticsChanged counters and the settle wait (issue 17): race-free (a change before the
wait counts), settled after a quiet period, bounded, keyed by the file whatever the URI spelling."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pi_lsp.editor.diagnostics_changes import DiagnosticsChanges


async def test_a_change_reported_before_the_wait_starts_is_not_missed(tmp_path: Path) -> None:
    changes = DiagnosticsChanges()
    path = tmp_path / "a.py"
    since = changes.count(path)
    await changes.changed([path.as_uri()])
    assert await changes.wait_settled(path, since, settle_seconds=5, quiet_seconds=0) is True


async def test_no_change_within_the_bound_is_not_settled(tmp_path: Path) -> None:
    changes = DiagnosticsChanges()
    path = tmp_path / "a.py"
    await changes.changed([(tmp_path / "b.py").as_uri()])  # another file
    assert await changes.wait_settled(path, changes.count(path), settle_seconds=0.05, quiet_seconds=0) is False


async def test_settles_after_the_last_change_of_a_burst(tmp_path: Path) -> None:
    changes = DiagnosticsChanges()
    path = tmp_path / "a.py"
    since = changes.count(path)

    async def burst() -> None:
        for _ in range(3):
            await changes.changed([path.as_uri()])
            await asyncio.sleep(0)

    waiting = asyncio.ensure_future(changes.wait_settled(path, since, settle_seconds=30, quiet_seconds=0.05))
    await burst()
    assert await waiting is True
    assert changes.count(path) == since + 3


async def test_uris_of_one_file_count_together(tmp_path: Path) -> None:
    changes = DiagnosticsChanges()
    (tmp_path / "real.py").write_text("", encoding="utf-8")
    (tmp_path / "link.py").symlink_to(tmp_path / "real.py")
    await changes.changed([(tmp_path / "link.py").as_uri(), (tmp_path / "real.py").as_uri()])
    assert changes.count(tmp_path / "real.py") == 1  # one notification, one document
    await changes.changed(["untitled:Untitled-1"])
    assert changes.count(tmp_path / "real.py") == 1
