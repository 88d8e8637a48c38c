"""The document store (design.md section 3) on real files in a temp folder."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from pi_lsp.editor.documents import DocumentStore, WaitOutcome


def _uri(path: Path) -> str:
    return path.as_uri()


def _full(text: str) -> list[dict]:
    return [{"text": text}]


def test_open_equal_to_disk_is_clean_and_records_the_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"\xef\xbb\xbfhello\r\nworld")
    store = DocumentStore()
    doc = store.did_open(_uri(path), "hello\r\nworld", 3)
    assert doc.saved_text == "hello\r\nworld"
    assert doc.has_bom and not doc.dirty and not doc.disk_newer
    assert doc.fingerprint is not None and doc.fingerprint.size == path.stat().st_size


def test_open_different_from_disk_is_dirty(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"hello\r\n")
    store = DocumentStore()
    doc = store.did_open(_uri(path), "hello\n", 1)  # no EOL normalisation: differs
    assert doc.saved_text is None and doc.dirty


def test_open_of_a_missing_or_non_utf8_file_is_dirty(tmp_path: Path) -> None:
    store = DocumentStore()
    assert store.did_open(_uri(tmp_path / "new.txt"), "", 1).dirty
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9")
    assert store.did_open(_uri(latin), "caf\ufffd", 1).dirty


def test_lookup_by_real_path_through_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("x", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    store = DocumentStore()
    doc = store.did_open(_uri(link), "x", 1)
    assert store.get(target) is doc and store.get(link) is doc
    assert store.get(tmp_path / "other.txt") is None


def test_untitled_documents_are_stored_but_never_matched(tmp_path: Path) -> None:
    store = DocumentStore()
    doc = store.did_open("untitled:Untitled-1", "draft", 1)
    assert doc.path is None and doc.real_path is None
    assert store.documents() == [doc]
    assert store.get(Path("Untitled-1")) is None
    assert store.did_change("untitled:Untitled-1", 2, _full("more"), "utf-16") is doc
    assert doc.text == "more"


def test_change_save_close(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\n", encoding="utf-8")
    store = DocumentStore()
    uri = _uri(path)
    store.did_open(uri, "one\n", 1)
    change = {"range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 3}}, "text": "!"}
    doc = store.did_change(uri, 2, [change], "utf-16")
    assert doc is not None and doc.text == "one!\n" and doc.version == 2 and doc.dirty
    path.write_text("one!\n", encoding="utf-8")
    store.did_save(uri)
    assert not doc.dirty and not doc.disk_newer
    assert store.did_close(uri) is doc and store.get(path) is None
    assert store.did_change(uri, 3, _full("x"), "utf-16") is None  # unknown URI: ignored


def test_malformed_change_leaves_the_document_unchanged(tmp_path: Path) -> None:
    store = DocumentStore()
    uri = _uri(tmp_path / "a.txt")
    store.did_open(uri, "keep", 1)
    with pytest.raises(ValueError):
        store.did_change(uri, 2, [{"range": {"start": {"line": 0}}, "text": "x"}], "utf-16")
    doc = store.by_uri(uri)
    assert doc is not None and doc.text == "keep" and doc.version == 1


def test_document_state_is_trusted_for_its_version_only(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("a", encoding="utf-8")
    store = DocumentStore()
    uri = _uri(path)
    doc = store.did_open(uri, "a", 1)
    store.document_state(uri, 1, True)
    assert doc.dirty  # the client's word, though text equals disk
    store.did_change(uri, 2, _full("a"), "utf-16")
    assert not doc.dirty  # a newer version: back to text comparison


def test_disk_newer_ignores_a_touch_but_sees_a_content_change(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("same", encoding="utf-8")
    store = DocumentStore()
    doc = store.did_open(_uri(path), "same", 1)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    assert not doc.disk_newer
    path.write_text("diff", encoding="utf-8")
    assert doc.disk_newer
    store.record_disk(path)
    assert not doc.disk_newer


async def test_waiter_satisfied_by_the_matching_change(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    store = DocumentStore()
    uri = _uri(path)
    store.did_open(uri, "old", 1)
    waiter = store.expect_change(path, lambda d: "new" in d.text)

    async def client() -> None:
        await asyncio.sleep(0.01)
        store.did_change(uri, 2, _full("still old"), "utf-16")  # Neovim may flush other text first
        await asyncio.sleep(0.01)
        store.did_change(uri, 3, _full("new"), "utf-16")

    task = asyncio.create_task(client())
    result = await waiter.wait(5)
    await task
    assert result.outcome is WaitOutcome.SATISFIED and result.version == 3 and result.text == "new"


async def test_waiter_reports_absent_and_no_change(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    store = DocumentStore()
    uri = _uri(path)
    store.did_open(uri, "old", 1)
    waiter = store.expect_change(path, lambda d: d.text == "new")
    store.did_change(uri, 2, _full("other"), "utf-16")
    absent = await waiter.wait(0.05)
    assert absent.outcome is WaitOutcome.ABSENT and absent.version == 2
    quiet = await store.expect_change(path, lambda d: True).wait(0.05)
    assert quiet.outcome is WaitOutcome.NO_CHANGE
    assert not store._waiters  # every wait unregisters


async def test_a_raising_predicate_counts_as_false(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    store = DocumentStore()
    store.did_open(_uri(path), "x", 1)
    waiter = store.expect_change(path, lambda d: 1 / 0)
    store.did_change(_uri(path), 2, _full("y"), "utf-16")
    assert (await waiter.wait(0.01)).outcome is WaitOutcome.ABSENT


def test_a_documents_bytes_are_kept_until_its_text_or_bom_changes(tmp_path: Path) -> None:
    # issue 21: a read of an unchanged buffer does not encode it again; any change is seen
    path = tmp_path / "a.txt"
    path.write_bytes(b"\xef\xbb\xbfcaf\xc3\xa9\n")
    store = DocumentStore()
    doc = store.did_open(_uri(path), "café\n", 1)
    first = doc.data()
    assert first == b"\xef\xbb\xbfcaf\xc3\xa9\n" and doc.data() is first
    store.did_change(_uri(path), 2, _full("tea \ud800\n"), "utf-16")  # a lone surrogate passes through
    assert doc.data() == b"\xef\xbb\xbftea \xed\xa0\x80\n"  # the file's BOM stays
    doc.has_bom = False
    assert doc.data() == b"tea \xed\xa0\x80\n"
    doc.has_bom = True
    store.did_change(_uri(path), 3, _full("café\n"), "utf-16")  # equal text, new object: same bytes again
    assert doc.data() == first
