"""EditorFileAccess's ``access`` + ``read`` of one call: which file each answers about (issue 21).

``access`` asks the disk first and looks the open documents up only when the disk refuses; ``read``
looks the document up once. These tests pin what that must not change: an open buffer always
passes ``access`` (even unsaved to a missing file), a file that is neither open nor on disk is
``ENOENT``, a symlink reaches the document of its target, and every read sees the store as it is
then (a document closed or changed between two reads).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from pi_lsp.editor.documents import DocumentStore
from pi_lsp.editor.file_access import UNSAVED_NOTICE, EditorFileAccess
from pi_lsp.editor.connection import EditorSettings
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from tests.editor.editor_sim import EditorSim, open_file

FAST = EditorSettings(apply_timeout_seconds=0.2, verify_timeout_seconds=0.2)


def _files(tmp_path: Path) -> tuple[Path, DocumentStore, EditorSim, EditorFileAccess]:
    path = tmp_path / "a.txt"
    path.write_bytes(b"on disk\n")
    store = DocumentStore()
    editor = EditorSim(store)
    return path, store, editor, EditorFileAccess(store, editor, FAST, LocalFileAccess())


async def test_an_open_buffer_whose_file_is_gone_passes_access_and_reads_the_buffer(tmp_path: Path) -> None:
    path, store, _, files = _files(tmp_path)
    open_file(store, path, text="unsaved buffer\n")
    path.unlink()
    await files.access(path)
    await files.access(path, write=True)
    snapshot = await files.read(path)
    assert snapshot.source == "buffer" and snapshot.data == b"unsaved buffer\n"
    assert snapshot.notices == (UNSAVED_NOTICE,)


async def test_a_file_neither_open_nor_on_disk_is_enoent(tmp_path: Path) -> None:
    _, store, _, files = _files(tmp_path)
    open_file(store, tmp_path / "a.txt")  # another file is open: the store is not empty
    with pytest.raises(FileNotFoundError) as caught:
        await files.access(tmp_path / "missing.txt")
    assert caught.value.errno == errno.ENOENT


async def test_without_apply_edit_a_missing_file_fails_access_even_when_open(tmp_path: Path) -> None:
    path, store, editor, files = _files(tmp_path)
    editor.with_features(apply_edit=False)  # everything on disk (Pi's behaviour)
    open_file(store, path, text="buffer\n")
    path.unlink()
    with pytest.raises(FileNotFoundError):
        await files.access(path)


async def test_a_symlink_to_an_open_document_reads_its_dirty_buffer(tmp_path: Path) -> None:
    path, store, editor, files = _files(tmp_path)
    uri = open_file(store, path)
    editor.type_text(uri, 0, 0, "typed: ")
    link = tmp_path / "link.txt"
    os.symlink(path, link)
    await files.access(link)
    snapshot = await files.read(link)
    assert snapshot.source == "buffer" and snapshot.data == b"typed: on disk\n"
    assert snapshot.path == link and snapshot.real_path == path
    assert snapshot.notices == (UNSAVED_NOTICE,)


async def test_a_symlink_re_pointed_between_two_reads_follows_its_new_target(tmp_path: Path) -> None:
    path, store, editor, files = _files(tmp_path)
    other = tmp_path / "b.txt"
    other.write_bytes(b"b on disk\n")
    uri = open_file(store, path)
    editor.type_text(uri, 0, 0, "a typed: ")
    link = tmp_path / "link.txt"
    os.symlink(path, link)
    assert (await files.read(link)).data == b"a typed: on disk\n"
    link.unlink()
    os.symlink(other, link)
    await files.access(link)
    snapshot = await files.read(link)
    assert snapshot.source == "disk" and snapshot.data == b"b on disk\n"


async def test_a_document_closed_between_two_reads_is_read_from_disk(tmp_path: Path) -> None:
    path, store, editor, files = _files(tmp_path)
    uri = open_file(store, path)
    editor.type_text(uri, 0, 0, "typed: ")
    await files.access(path)
    assert (await files.read(path)).source == "buffer"
    store.did_close(uri)
    await files.access(path)
    snapshot = await files.read(path)
    assert snapshot.source == "disk" and snapshot.data == b"on disk\n" and snapshot.notices == ()


async def test_a_document_changed_between_two_reads_reads_its_new_text(tmp_path: Path) -> None:
    path, store, editor, files = _files(tmp_path)
    uri = open_file(store, path)
    first = await files.read(path)
    assert first.data == b"on disk\n" and first.notices == () and first.version == 1
    editor.type_text(uri, 0, 2, " the")
    second = await files.read(path)
    assert second.data == b"on the disk\n" and second.notices == (UNSAVED_NOTICE,)
    assert second.version == store.by_uri(uri).version != 1


async def test_a_clean_buffer_older_than_the_disk_reads_the_disk(tmp_path: Path) -> None:
    path, store, _, files = _files(tmp_path)
    open_file(store, path)
    path.write_bytes(b"changed on disk, a longer text\n")
    await files.access(path)
    snapshot = await files.read(path)
    assert snapshot.source == "disk" and snapshot.data == b"changed on disk, a longer text\n"
