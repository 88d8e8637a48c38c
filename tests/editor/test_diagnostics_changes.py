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


async def test_a_change_dated_before_the_version_waited_for_does_not_count(tmp_path: Path) -> None:
    changes = DiagnosticsChanges()
    path = tmp_path / "a.py"
    uri = path.as_uri()
    since = changes.count(path)
    await changes.changed([uri], {uri: 4})  # computed for the text before the edit (version 5)
    assert await changes.wait_settled(path, since, settle_seconds=0.05, quiet_seconds=0, version=5) is False
    assert await changes.wait_settled(path, since, settle_seconds=5, quiet_seconds=0) is True  # undated wait
    await changes.changed([uri], {uri: 5})
    assert await changes.wait_settled(path, since, settle_seconds=5, quiet_seconds=0, version=5) is True


async def test_an_undated_change_counts_for_a_dated_wait(tmp_path: Path) -> None:
    changes = DiagnosticsChanges()
    path = tmp_path / "a.py"
    since = changes.count(path)
    await changes.changed([path.as_uri()], {"file:///elsewhere.py": 1})
    assert await changes.wait_settled(path, since, settle_seconds=5, quiet_seconds=0, version=7) is True


async def test_a_stale_change_does_not_extend_the_quiet_period(tmp_path: Path) -> None:
    changes = DiagnosticsChanges()
    path = tmp_path / "a.py"
    uri = path.as_uri()
    since = changes.count(path)
    await changes.changed([uri], {uri: 3})
    waiting = asyncio.ensure_future(changes.wait_settled(path, since, settle_seconds=10, quiet_seconds=0.2, version=3))
    while not waiting.done():  # stale reports never stop; none of them is news about version 3
        await changes.changed([uri], {uri: 2})
        await asyncio.sleep(0.02)
    assert waiting.result() is True


async def test_versions_of_two_uris_of_one_file_combine(tmp_path: Path) -> None:
    changes = DiagnosticsChanges()
    (tmp_path / "real.py").write_text("", encoding="utf-8")
    (tmp_path / "link.py").symlink_to(tmp_path / "real.py")
    link, real = (tmp_path / "link.py").as_uri(), (tmp_path / "real.py").as_uri()
    await changes.changed([link, real], {link: 2, real: 6})  # the newest of the two
    assert await changes.wait_settled(tmp_path / "real.py", 0, settle_seconds=5, quiet_seconds=0, version=6) is True
    await changes.changed([link, real], {link: 2})  # one of them undated: undated
    assert await changes.wait_settled(tmp_path / "real.py", 1, settle_seconds=5, quiet_seconds=0, version=9) is True


async def test_changes_too_old_for_their_version_to_be_kept_count(tmp_path: Path) -> None:
    from pi_lsp.editor.diagnostics_changes import RECENT

    changes = DiagnosticsChanges()
    path = tmp_path / "a.py"
    uri = path.as_uri()
    await changes.changed([uri], {uri: 1})
    for _ in range(RECENT):
        await changes.changed([uri], {uri: 0})
    # the first change's version is no longer kept: it counts, as an undated one would
    assert await changes.wait_settled(path, 0, settle_seconds=5, quiet_seconds=0, version=1) is True
    assert await changes.wait_settled(path, 1, settle_seconds=0.05, quiet_seconds=0, version=1) is False
