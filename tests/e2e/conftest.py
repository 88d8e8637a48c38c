"""Fixtures for the end-to-end tests: a real ``python -m pi_lsp`` over stdio, driven by
:class:`~pi_lsp.demo.fake_editor.FakeEditor`, pytest-lsp's ``LanguageClient`` or raw frames."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.demo.fake_editor import FakeEditor
from tests.e2e.daemon_support import RawServer, server_env, server_tmp


@pytest.fixture
async def make_editor(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``await make_editor(root=None, **FakeEditor options)``: a started editor, stopped at teardown.

    Unless told otherwise, the editor answers approval prompts with "Allow for this session"."""
    editors: list[FakeEditor] = []

    async def make(root: Path | None = None, **options: Any) -> FakeEditor:
        # these tests are about the daemon's plumbing: the user approves what the policy asks
        options.setdefault("message_answer", "Allow for this session")
        editor = FakeEditor(root or tmp_path, env=server_env(TMPDIR=str(server_tmp(tmp_path))), **options)
        editors.append(editor)
        await editor.start()
        return editor

    yield make
    for editor in editors:
        await editor.stop()


@pytest.fixture
def raw_server(tmp_path: Path) -> Iterator[RawServer]:
    """An initialized daemon on raw frames, rooted at ``tmp_path``."""
    server = RawServer(tmp_path, server_tmp(tmp_path))
    server.initialize(tmp_path)
    yield server
    server.close()
