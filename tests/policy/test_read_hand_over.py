"""A ``read`` the policy allows without asking is run on the path the policy judged (issue 21):
the tool gets it from the policy instead of resolving it again, once per call, never across
calls, and never when a later hook changed the path. Real pipeline, real files."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from pi_lsp.agent.hooks import BeforeToolCallContext
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.policy.call_scope import CallScope, call_scope
from pi_lsp.tools.file_io.paths import resolve_read_path
from pi_lsp.tools.read import ReadArgs
from tests.policy.test_approval_hook import Session


@pytest.fixture
def session(tmp_path: Path) -> Session:
    """No user to ask: what the rules would ask about is refused (the fallback)."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("the secret\n")
    made = Session(tmp_path, None)
    (made.cwd / "a.txt").write_text("plain a\n")
    return made


async def test_a_file_replaced_by_a_symlink_between_two_calls_is_judged_again(session: Session, tmp_path: Path) -> None:
    assert await session.call("read", path="a.txt") == (False, "plain a\n")
    (session.cwd / "a.txt").unlink()
    (session.cwd / "a.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    is_error, text = await session.call("read", path="a.txt")
    assert is_error and "the secret" not in text and "needs the user's approval" in text
    (session.cwd / "a.txt").unlink()
    (session.cwd / "a.txt").write_text("plain again\n")
    assert await session.call("read", path="a.txt") == (False, "plain again\n")
    assert [entry["decision"] for entry in session.journal] == ["allow", "deny", "allow"]


async def test_a_symlink_inside_the_workspace_is_read_through(session: Session) -> None:
    (session.cwd / "real.txt").write_text("through the link\n")
    (session.cwd / "link.txt").symlink_to(session.cwd / "real.txt")
    assert await session.call("read", path="link.txt") == (False, "through the link\n")


async def test_a_name_stored_in_another_unicode_form_is_read_as_judged(session: Session) -> None:
    stored = unicodedata.normalize("NFD", "café.txt")
    (session.cwd / stored).write_text("decomposed\n")
    assert await session.call("read", path=unicodedata.normalize("NFC", "café.txt")) == (False, "decomposed\n")
    assert session.journal[-1]["scope"] == stored


async def test_a_file_that_appears_after_a_failed_read_is_read_next_time(session: Session) -> None:
    is_error, text = await session.call("read", path="late.txt")
    assert is_error and text == f"ENOENT: no such file or directory, access '{session.cwd / 'late.txt'}'"
    (session.cwd / "late.txt").write_text("here now\n")
    assert await session.call("read", path="late.txt") == (False, "here now\n")


async def test_a_path_changed_by_a_later_hook_is_resolved_by_the_tool(session: Session) -> None:
    (session.cwd / "b.txt").write_text("plain b\n")

    async def redirect(ctx: BeforeToolCallContext, signal: AbortSignal) -> None:
        ctx.args.path = "b.txt"  # type: ignore[attr-defined]

    session.pipeline.add_before_hook(redirect)
    assert await session.call("read", path="a.txt") == (False, "plain b\n")


def test_a_handed_over_path_is_taken_once_and_only_for_the_same_path_and_folder(tmp_path: Path) -> None:
    args = ReadArgs.model_validate({"path": "a.txt"})
    a, real = tmp_path / "a.txt", str(tmp_path / "real" / "a.txt")
    assert args.take_resolved_path(tmp_path) is None
    args.hand_over_resolved_path(tmp_path, a, real)
    assert args.take_resolved_path(tmp_path) == (a, real)
    assert args.take_resolved_path(tmp_path) is None
    args.hand_over_resolved_path(tmp_path, a, real)
    assert args.take_resolved_path(tmp_path / "sub") is None  # another working directory
    args.hand_over_resolved_path(tmp_path, a, real)
    args.path = "b.txt"
    assert args.take_resolved_path(tmp_path) is None
    args.hand_over_resolved_path(tmp_path, tmp_path / "b.txt", str(tmp_path / "b.txt"))
    assert args == ReadArgs(path="b.txt") and args.model_dump() == {"path": "b.txt", "offset": None, "limit": None}
    assert args.model_copy().take_resolved_path(tmp_path) is None  # a copy is another call's args


def test_a_scope_is_immutable_and_its_real_path_is_not_part_of_its_identity() -> None:
    path = Path("/w/a.txt")
    with_real = CallScope("read", "path", path=path, shown="a.txt", real=os.fspath(path))
    without = CallScope("read", "path", path=path, shown="a.txt")
    assert with_real == without and hash(with_real) == hash(without) and repr(with_real) == repr(without)
    assert with_real != CallScope("edit", "path", path=path, shown="a.txt")
    assert with_real.grant_key == ("read", "path", "/w/a.txt")
    with pytest.raises(AttributeError):
        with_real.tool = "edit"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del with_real.path


def test_a_read_is_judged_by_read_s_resolution_and_its_real_path(tmp_path: Path) -> None:
    nfd = unicodedata.normalize("NFD", "café.txt")
    (tmp_path / nfd).write_text("x")
    (tmp_path / "folder").mkdir()
    (tmp_path / "link.txt").symlink_to(tmp_path / nfd)
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    for name in ["café.txt", "link.txt", "folder", "dangling", "missing.txt", "folder/../link.txt", "café.txt/x"]:
        scope = call_scope("read", ReadArgs(path=name), tmp_path)
        expected = resolve_read_path(name, tmp_path)
        assert scope is not None and scope.path == expected, name
        assert scope.shown == os.path.relpath(expected, tmp_path), name
        assert scope.real == (os.path.realpath(expected) if os.path.exists(expected) else None), name
    nul = call_scope("read", ReadArgs(path="a\0b"), tmp_path)  # judged by where it points
    assert nul is not None and nul.path == tmp_path / "a\0b" and nul.real is None
