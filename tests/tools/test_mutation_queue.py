"""The per-file mutation queue (pi-behaviour.md 3 and the checklist's queue items)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pi_lsp.tools.file_io.mutation_queue import active_keys, file_mutation_lock, mutation_key


async def _op(path: Path, name: str, log: list[str], hold: asyncio.Event | None = None) -> None:
    async with file_mutation_lock(path):
        log.append(f"{name}:start")
        if hold is not None:
            await hold.wait()
        await asyncio.sleep(0)
        log.append(f"{name}:end")


async def test_same_path_is_fifo(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    log: list[str] = []
    release = asyncio.Event()
    first = asyncio.create_task(_op(target, "first", log, release))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(_op(target, "second", log))
    third = asyncio.create_task(_op(target, "third", log))
    await asyncio.sleep(0.01)
    assert log == ["first:start"]
    release.set()
    await asyncio.gather(first, second, third)
    assert log == ["first:start", "first:end", "second:start", "second:end", "third:start", "third:end"]
    assert active_keys() == []


async def test_different_paths_run_concurrently(tmp_path: Path) -> None:
    log: list[str] = []
    release = asyncio.Event()
    a = asyncio.create_task(_op(tmp_path / "a", "a", log, release))
    await asyncio.sleep(0.01)
    b = asyncio.create_task(_op(tmp_path / "b", "b", log))
    await asyncio.wait_for(b, 5)
    assert log == ["a:start", "b:start", "b:end"]
    release.set()
    await a


async def test_symlink_and_target_share_a_queue(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("x")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert mutation_key(link) == mutation_key(target) == target.resolve()
    log: list[str] = []
    release = asyncio.Event()
    first = asyncio.create_task(_op(link, "link", log, release))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(_op(target, "target", log))
    await asyncio.sleep(0.01)
    assert log == ["link:start"]
    release.set()
    await asyncio.gather(first, second)
    assert log == ["link:start", "link:end", "target:start", "target:end"]


def test_key_of_missing_files(tmp_path: Path) -> None:
    assert mutation_key(tmp_path / "new" / "x.txt") == tmp_path.resolve() / "new" / "x.txt"
    (tmp_path / "file").write_text("x")
    assert mutation_key(tmp_path / "file" / "x") == tmp_path.resolve() / "file" / "x"


def test_symlink_loop_raises_eloop(tmp_path: Path) -> None:
    (tmp_path / "l1").symlink_to("l2")
    (tmp_path / "l2").symlink_to("l1")
    with pytest.raises(OSError) as info:
        mutation_key(tmp_path / "l1")
    assert info.value.errno == 40


async def test_released_after_error_and_cancel(tmp_path: Path) -> None:
    target = tmp_path / "a"
    with pytest.raises(RuntimeError):
        async with file_mutation_lock(target):
            raise RuntimeError("boom")
    hold = asyncio.Event()
    holder = asyncio.create_task(_op(target, "holder", [], hold))
    await asyncio.sleep(0.01)
    waiter = asyncio.create_task(_op(target, "waiter", []))
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    holder.cancel()
    with pytest.raises(asyncio.CancelledError):
        await holder
    assert active_keys() == []
    async with asyncio.timeout(5):
        async with file_mutation_lock(target):
            pass
