"""EditorFileAccess: each state of design.md section 3 and each outcome of section 4.

The editor is :class:`EditorSim` (in-process, applying edits with LSP rules to a real store); the
disk is the real ``LocalFileAccess`` on a temp folder. F2's tests do the same over the wire.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol.types import TextDocumentEdit

from pi_lsp.agent.tool import ToolContext, ToolError
from pi_lsp.editor.connection import EditorSettings
from pi_lsp.editor.documents import DocumentStore
from pi_lsp.editor.file_access import UNSAVED_NOTICE, EditorFileAccess
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from tests.editor.editor_sim import NEOVIM, PLAIN, EditorSim, open_file

FAST = EditorSettings(apply_timeout_seconds=0.2, verify_timeout_seconds=0.2)


def _setup(tmp_path: Path, content: bytes = b"alpha\nbeta\ngamma\n", **sim: object):
    path = tmp_path / "a.txt"
    path.write_bytes(content)
    store = DocumentStore()
    editor = EditorSim(store, **sim)  # type: ignore[arg-type]
    return path, store, editor, EditorFileAccess(store, editor, FAST, LocalFileAccess())


async def _edit(files: EditorFileAccess, path: Path, old: bytes, new: bytes, ctx: ToolContext | None = None):
    snapshot = await files.read(path, ctx)
    assert old in snapshot.data
    return await files.write(path, snapshot.data.replace(old, new), previous=snapshot, label="pi: edit a.txt", ctx=ctx)


async def test_not_open_reads_and_writes_disk_by_default(tmp_path: Path) -> None:
    path, _, editor, files = _setup(tmp_path)
    editor.with_features(edit_closed_files=False)  # default route: openDocuments
    snapshot = await files.read(path)
    assert snapshot.source == "disk" and snapshot.data == b"alpha\nbeta\ngamma\n"
    report = await _edit(files, path, b"beta", b"BETA")
    assert report.via == "disk" and editor.received == []
    assert path.read_bytes() == b"alpha\nBETA\ngamma\n"


async def test_open_clean_edit_is_a_versioned_minimal_edit_then_saved(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path, b"\xef\xbb\xbfalpha\nbeta\ngamma\n")
    uri = open_file(store, path, version=7)
    snapshot = await files.read(path)
    assert snapshot.source == "buffer" and snapshot.version == 7 and snapshot.notices == ()
    assert snapshot.data.startswith(b"\xef\xbb\xbf")  # the file's BOM in front of the buffer
    report = await _edit(files, path, b"beta", b"BETA")
    (params,) = editor.received
    assert params.label == "pi: edit a.txt"
    (change,) = params.edit.document_changes
    assert isinstance(change, TextDocumentEdit)
    assert change.text_document.version == 7 and change.text_document.uri == uri
    (edit,) = change.edits
    assert (edit.range.start.line, edit.range.start.character, edit.range.end.character) == (1, 0, 4)
    assert edit.new_text == "BETA"
    assert editor.saves == [[{"uri": uri, "version": 8}]]  # the post-edit version of the didChange
    assert report.via == "editor" and report.notices == []
    assert path.read_bytes() == b"\xef\xbb\xbfalpha\nBETA\ngamma\n"


@pytest.mark.parametrize(("features", "versioned"), [(NEOVIM, True), (PLAIN, False)])
async def test_versioned_edits_for_neovim_changes_map_otherwise(tmp_path: Path, features, versioned) -> None:
    path, store, editor, files = _setup(tmp_path, "h\u00e9llo \U0001F600 world\n".encode(), features=features)
    uri = open_file(store, path, version=0)
    await _edit(files, path, b"world", b"there")
    (params,) = editor.received
    if versioned:
        (change,) = params.edit.document_changes
        assert change.text_document.version == 0
        edits = change.edits
    else:
        assert params.edit.document_changes is None
        edits = params.edit.changes[uri]
    column = {"utf-8": 12, "utf-32": 8}[features.position_encoding]
    assert edits[0].range.start.character == column
    assert store.by_uri(uri).text == "h\u00e9llo \U0001F600 there\n"


async def test_open_dirty_buffer_is_edited_and_left_unsaved(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    uri = open_file(store, path)
    editor.type_text(uri, 0, 5, " (user)")
    snapshot = await files.read(path)
    assert snapshot.notices == (UNSAVED_NOTICE,)
    assert b"alpha (user)" in snapshot.data
    report = await _edit(files, path, b"gamma", b"GAMMA")
    assert store.by_uri(uri).text == "alpha (user)\nbeta\nGAMMA\n"  # the user's text kept
    assert editor.saves == [] and path.read_bytes() == b"alpha\nbeta\ngamma\n"
    assert any("unsaved changes by the user" in n for n in report.notices)


async def test_write_to_a_dirty_buffer_needs_a_read_of_that_version_first(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    uri = open_file(store, path)
    editor.type_text(uri, 0, 0, "x")
    ctx = ToolContext(tool_call_id="c1", session_id="s1")
    with pytest.raises(ToolError, match="Read the file first"):
        await files.write(path, b"replaced\n", previous=None, label="pi: write a.txt", ctx=ctx)
    assert editor.received == []
    await files.read(path, ctx)
    await files.write(path, b"replaced\n", previous=None, label="pi: write a.txt", ctx=ctx)
    assert store.by_uri(uri).text == "replaced\n"


@pytest.mark.parametrize("route", [None, "editor"])
async def test_closed_file_through_the_editor_has_version_null_and_is_saved(tmp_path: Path, route) -> None:
    path, store, editor, files = _setup(tmp_path)
    files.settings = EditorSettings(route=route, apply_timeout_seconds=0.2, verify_timeout_seconds=0.2)
    report = await _edit(files, path, b"alpha", b"ALPHA")
    (params,) = editor.received
    assert params.edit.document_changes[0].text_document.version is None
    assert editor.saves == [[{"uri": path.as_uri(), "version": None}]]
    assert report.via == "editor" and report.notices == []
    assert path.read_bytes() == b"ALPHA\nbeta\ngamma\n"


async def test_closed_file_route_open_documents_setting_writes_disk(tmp_path: Path) -> None:
    path, _, editor, files = _setup(tmp_path)
    files.settings = EditorSettings(route="openDocuments")
    assert (await _edit(files, path, b"alpha", b"A")).via == "disk"
    assert editor.received == [] and path.read_bytes() == b"A\nbeta\ngamma\n"


async def test_cr_only_closed_file_goes_to_disk_when_the_client_normalizes(tmp_path: Path) -> None:
    path, _, editor, files = _setup(tmp_path, b"a\rb\rc")
    editor.with_features(normalizes_line_endings=True)
    assert (await _edit(files, path, b"b", b"B")).via == "disk"
    assert editor.received == [] and path.read_bytes() == b"a\rB\rc"


@pytest.mark.parametrize(
    ("reply", "message"),
    [("refuse", "did not apply the edit .*the document version changed"),
     ("error", "refused the edit .*require version 1"),
     ("hang", "did not answer the edit .* within 0.2 s. It may still apply it: read the file again")],
)
async def test_a_refused_or_unanswered_edit_is_an_error_and_nothing_is_written(tmp_path, reply, message) -> None:
    path, store, editor, files = _setup(tmp_path, reply=reply)
    uri = open_file(store, path)
    with pytest.raises(ToolError, match=message):
        await _edit(files, path, b"beta", b"BETA")
    assert store.by_uri(uri).text == "alpha\nbeta\ngamma\n"
    assert path.read_bytes() == b"alpha\nbeta\ngamma\n" and editor.saves == []
    assert not store._waiters


async def test_no_didchange_is_success_not_yet_confirmed_and_not_saved(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path, sync="never")
    open_file(store, path)
    report = await _edit(files, path, b"beta", b"BETA")
    assert any("applied by the editor, not yet confirmed" in n for n in report.notices)
    assert editor.saves == []


async def test_a_didchange_without_the_edit_is_an_error(tmp_path: Path) -> None:
    path, store, _, files = _setup(tmp_path, sync="without_edit")
    open_file(store, path)
    with pytest.raises(ToolError, match="applied but the buffer does not contain it"):
        await _edit(files, path, b"beta", b"BETA")


async def test_a_keystroke_racing_the_edit_gives_a_warning_and_no_save(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path, user_types="typed ")
    uri = open_file(store, path)
    report = await _edit(files, path, b"gamma", b"GAMMA")
    assert store.by_uri(uri).text == "typed alpha\nbeta\nGAMMA\n"
    assert any("other changes" in n for n in report.notices)
    assert any("not saved" in n.lower() or "Not saved" in n for n in report.notices)  # version moved on
    assert path.read_bytes() == b"alpha\nbeta\ngamma\n"


@pytest.mark.parametrize(("save_reply", "notice"), [("skip", "Not saved: the document changed"),
                                                    ("error", "Not saved: the editor failed to save")])
async def test_a_skipped_or_failed_save_is_a_notice(tmp_path: Path, save_reply, notice) -> None:
    path, store, _, files = _setup(tmp_path, save_reply=save_reply)
    open_file(store, path)
    report = await _edit(files, path, b"beta", b"BETA")
    assert any(notice in n for n in report.notices)
    assert path.read_bytes() == b"alpha\nbeta\ngamma\n"


async def test_saved_bytes_that_differ_are_reported(tmp_path: Path) -> None:
    path, store, _, files = _setup(tmp_path, formatter=True)
    open_file(store, path)
    report = await _edit(files, path, b"beta", b"BETA")
    assert any("differ from the expected ones" in n for n in report.notices)


async def test_without_save_support_the_result_says_unsaved(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    editor.with_features(save_documents=False)
    open_file(store, path)
    report = await _edit(files, path, b"beta", b"BETA")
    assert any("not saved" in n for n in report.notices) and editor.saves == []


async def test_client_without_apply_edit_gets_everything_on_disk(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    editor.with_features(apply_edit=False, reload_documents=False)
    open_file(store, path, text="buffer text\n")
    assert (await files.read(path)).data == b"alpha\nbeta\ngamma\n"
    report = await _edit(files, path, b"beta", b"BETA")
    assert report.via == "disk" and editor.received == []
    assert any("outdated until it reloads" in n for n in report.notices)


async def test_disk_newer_clean_edit_reloads_first_then_edits_the_buffer(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    uri = open_file(store, path)
    path.write_bytes(b"changed outside\n")
    assert (await files.read(path)).data == b"changed outside\n"
    report = await _edit(files, path, b"outside", b"by agent")
    assert report.via == "editor" and editor.reloads == [[uri]]
    (params,) = editor.received  # one minimal edit against the reloaded buffer
    assert params.edit.document_changes[0].edits[0].new_text == "by agent"
    assert store.by_uri(uri).text == "changed by agent\n" and not store.by_uri(uri).dirty
    assert path.read_bytes() == b"changed by agent\n"


async def test_disk_newer_clean_write_goes_to_disk_then_reloads(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    uri = open_file(store, path)
    path.write_bytes(b"changed outside\n")
    report = await files.write(path, b"written\n", previous=None, label="pi: write a.txt")
    assert report.via == "disk" and report.notices == [] and editor.reloads == [[uri]]
    assert editor.received == [] and path.read_bytes() == b"written\n"
    assert store.by_uri(uri).text == "written\n" and not store.by_uri(uri).dirty


async def test_disk_newer_clean_edit_without_reload_support_is_done_on_disk_and_said(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    editor.with_features(reload_documents=False)
    uri = open_file(store, path)
    path.write_bytes(b"changed outside\n")
    report = await _edit(files, path, b"outside", b"by agent")
    assert report.via == "disk" and editor.received == [] and editor.reloads == []
    assert path.read_bytes() == b"changed by agent\n"
    assert any("Edited on disk" in n and "cannot reload" in n for n in report.notices), report.notices
    assert store.by_uri(uri).text == "alpha\nbeta\ngamma\n"  # the editor's buffer, untouched


async def test_a_buffer_the_editor_reloaded_itself_is_clean_again(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    uri = open_file(store, path)
    path.write_bytes(b"changed outside\n")
    store.did_change(uri, 2, [{"text": "changed outside\n"}], "utf-16")  # VS Code reloads clean buffers
    state, _ = await files.state_of(path)
    assert state.name == "CLEAN"
    await _edit(files, path, b"outside", b"by agent")
    assert path.read_bytes() == b"changed by agent\n" and editor.reloads == []


async def test_disk_newer_dirty_is_a_conflict(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    uri = open_file(store, path)
    editor.type_text(uri, 0, 0, "x")
    path.write_bytes(b"changed outside\n")
    snapshot = await files.read(path)
    assert snapshot.notices == (UNSAVED_NOTICE,)
    with pytest.raises(ToolError, match="Conflict"):
        await files.write(path, b"new\n", previous=snapshot, label="pi: write a.txt")
    assert path.read_bytes() == b"changed outside\n" and editor.received == []


async def test_buffer_moved_on_since_the_read_is_refused(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    uri = open_file(store, path)
    snapshot = await files.read(path)
    editor.type_text(uri, 2, 0, "!")
    with pytest.raises(ToolError, match="changed while the edit was being prepared"):
        await files.write(path, snapshot.data.replace(b"beta", b"B"), previous=snapshot, label="pi: edit a.txt")
    assert editor.received == []


async def test_cancel_during_apply_waits_and_reports_what_happened(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path, apply_delay=0.05)
    files.settings = EditorSettings(apply_timeout_seconds=5, verify_timeout_seconds=5)
    uri = open_file(store, path)
    task = asyncio.create_task(_edit(files, path, b"beta", b"BETA"))
    while not editor.received:
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(ToolError, match="^Operation aborted after the editor applied the edit"):
        await task
    assert store.by_uri(uri).text == "alpha\nBETA\ngamma\n"
    assert path.read_bytes() == b"alpha\nBETA\ngamma\n"  # the section finished: saved


async def test_identical_content_sends_nothing(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    open_file(store, path)
    snapshot = await files.read(path)
    report = await files.write(path, snapshot.data, previous=snapshot, label="pi: write a.txt")
    assert report.via == "editor" and editor.received == []


async def test_crlf_document_without_final_newline(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path, b"one\r\ntwo\r\nthree")
    uri = open_file(store, path)
    await _edit(files, path, b"two\r\nthree", b"2\r\n3")
    (edit,) = editor.received[0].edit.document_changes[0].edits
    assert edit.range.start.line == 1
    assert store.by_uri(uri).text == "one\r\n2\r\n3"
    assert path.read_bytes() == b"one\r\n2\r\n3"


async def test_unsaved_files_lists_dirty_buffers_and_held_unopened_edits_until_saved(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path, save_reply="skip")
    other = tmp_path / "b.txt"
    other.write_bytes(b"closed\n")
    uri = open_file(store, path)
    assert await files.unsaved_files() == []
    editor.type_text(uri, 0, 0, "x")
    snapshot = await files.read(other)
    await files.write(other, b"closed, edited\n", previous=snapshot, label="pi: edit b.txt")
    assert other.read_bytes() == b"closed\n"  # held in the editor, its save skipped
    assert await files.unsaved_files() == [path, other.resolve()]
    other.write_bytes(b"closed, edited\n")  # the user saved it later
    store.did_change(uri, 9, [{"text": "alpha\nbeta\ngamma\n"}], "utf-16")  # and undid the typing
    assert await files.unsaved_files() == []


async def test_reload_changed_reloads_only_clean_buffers_whose_file_changed(tmp_path: Path) -> None:
    path, store, editor, files = _setup(tmp_path)
    dirty = tmp_path / "d.txt"
    dirty.write_bytes(b"d\n")
    clean_uri = open_file(store, path)
    dirty_uri = open_file(store, dirty)
    untouched = tmp_path / "u.txt"
    untouched.write_bytes(b"u\n")
    open_file(store, untouched)
    editor.type_text(dirty_uri, 0, 0, "typed ")
    path.write_bytes(b"new a\n")
    dirty.write_bytes(b"new d\n")
    assert await files.reload_changed() == {}
    assert editor.reloads == [[clean_uri]]
    assert store.by_uri(clean_uri).text == "new a\n" and not store.by_uri(clean_uri).dirty
    assert store.by_uri(dirty_uri).text == "typed d\n"  # never reloaded over the user's work
    editor.with_features(reload_documents=False)
    path.write_bytes(b"newer a\n")
    problems = await files.reload_changed()
    assert list(problems) == [clean_uri] and "cannot reload" in problems[clean_uri]


def test_the_change_is_recognised_with_the_user_typing_right_next_to_it() -> None:
    from pi_lsp.editor.documents import Document
    from pi_lsp.editor.edit_session import contains_change

    old = "".join(f"line {i}\n" for i in range(20))
    new = old.replace("line 10\n", "line TEN\n")
    present = contains_change(old, new)

    def doc(text: str) -> Document:
        return Document("file:///x", None, None, text, 1)

    assert present(doc(new.replace("line 9\n", "line 9 typed\n")))  # typing just before the change
    assert present(doc(new.replace("line 11\n", "typed line 11\n")))  # just after it
    assert present(doc("typed " + new))  # far away
    assert not present(doc(old.replace("line 9\n", "line 9 typed\n")))  # typing, but no edit
    assert not present(doc(old))
    deletion = contains_change(old, old.replace("line 10\n", ""))
    assert not deletion(doc(old.replace("line 9\n", "line 9 typed\n")))
    assert deletion(doc("typed " + old.replace("line 10\n", "")))
