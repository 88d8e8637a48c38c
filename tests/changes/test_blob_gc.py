"""Garbage collection of the change journal's blobs (issue 18, :mod:`pi_lsp.changes.blob_gc`):
only blobs no journal references, nobody holds and nobody wrote lately go; never while another
process of the workspace runs (a real second process holding its live file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from pi_lsp.changes.blob_gc import LIVE_DIR, BlobCollector
from pi_lsp.changes.blobs import BlobStore

OLD = time.time() - 2 * 3600


def _age(store: BlobStore, digest: str, when: float = OLD) -> None:
    os.utime(store.root / digest[:2] / digest[2:], (when, when))


def _store(tmp_path: Path, journal: list[dict]) -> tuple[BlobStore, Path]:
    journals = tmp_path / "changes"
    journals.mkdir()
    (journals / "s1.jsonl").write_text("".join(json.dumps(e) + "\n" for e in journal) + '{"type": "chan', encoding="utf-8")
    return BlobStore(tmp_path / "blobs"), journals


def _put_old(store: BlobStore, data: bytes) -> str:
    digest = store.put(data)
    assert digest is not None
    _age(store, digest)
    store.used.discard(digest)  # as if an earlier process had written it
    return digest


def test_only_unreferenced_old_blobs_nobody_holds_are_collected(tmp_path: Path) -> None:
    store, journals = _store(tmp_path, [])
    referenced = _put_old(store, b"before")
    after = _put_old(store, b"after")
    garbage = _put_old(store, b"garbage" * 100)
    held = _put_old(store, b"held by the snapshot cache")
    young = store.put(b"written a moment ago")
    mine = _put_old(store, b"this process reused it")
    assert store.put(b"this process reused it") == mine  # reuse: young again, and used
    _age(store, mine)  # even aged, what this process used stays
    (journals / "s1.jsonl").write_text(json.dumps(
        {"type": "change", "seq": 1, "turn": 1, "toolCallId": "c", "toolName": "edit", "path": "/x",
         "before": referenced, "after": after, "timestamp": 0}) + "\n", encoding="utf-8")
    temp = store.root / "ab" / ".cdef.123.tmp"
    temp.parent.mkdir(parents=True, exist_ok=True)
    temp.write_bytes(b"half written")
    os.utime(temp, (OLD, OLD))
    total = store.total_bytes()
    collector = BlobCollector(journals, store, lambda: [held], grace_seconds=3600)
    try:
        report = collector.collect()
    finally:
        collector.close()
    assert report.skipped is None and report.removed == 2 and report.freed_bytes == 700 + len(b"half written")
    assert not store.has(garbage) and not temp.exists()
    assert all(store.has(d) for d in (referenced, after, held, young, mine))
    assert store.total_bytes() == total - 700


def test_a_full_store_collects_before_refusing(tmp_path: Path) -> None:
    store, journals = _store(tmp_path, [])
    store.max_total_bytes = 1000
    garbage = _put_old(store, b"g" * 900)
    collector = BlobCollector(journals, store, lambda: [], grace_seconds=3600)
    try:
        digest = store.put(b"n" * 500)
        assert digest is not None and not store.has(garbage)
        assert store.put(b"m" * 600) is None  # still over budget: refused (not restorable)
    finally:
        collector.close()


def test_nothing_is_collected_while_another_process_of_the_workspace_runs(tmp_path: Path) -> None:
    store, journals = _store(tmp_path, [])
    garbage = _put_old(store, b"garbage")
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys, pathlib\n"
            "from pi_lsp.changes.blob_gc import BlobCollector\n"
            "from pi_lsp.changes.blobs import BlobStore\n"
            f"c = BlobCollector(pathlib.Path({str(journals)!r}), BlobStore(pathlib.Path({str(store.root)!r})), list)\n"
            "print('ready', flush=True)\n"
            "sys.stdin.read()\n"
        )],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    collector = BlobCollector(journals, store, lambda: [], grace_seconds=3600)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        report = collector.collect()
        assert report.skipped == "another process of this workspace is running" and store.has(garbage)
        holder.kill()  # a crashed daemon: its live file stays, unlocked
        holder.wait()
        assert len(list((store.root / LIVE_DIR).iterdir())) == 2
        report = collector.collect()
        assert report.skipped is None and not store.has(garbage)
        assert len(list((store.root / LIVE_DIR).iterdir())) == 1  # the stale one was removed
    finally:
        collector.close()
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    assert list((store.root / LIVE_DIR).iterdir()) == []
