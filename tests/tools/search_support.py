"""Helpers shared by the grep, find and ls tests: run a tool directly, build trees."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.agent.tool import ToolContext, ToolError
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.find import FindTool
from pi_lsp.tools.grep import GrepTool
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.ls import LsTool

TOOLS = {"grep": GrepTool, "find": FindTool, "ls": LsTool}
BIG_DIR_ENTRIES = 100_000


def make_env(cwd: Path, **kwargs: Any) -> ToolEnvironment:
    """A real environment rooted at ``cwd`` (the search tools never use ``files``)."""
    return ToolEnvironment(cwd=cwd, files=LocalFileAccess(), temp_dir=cwd, **kwargs)


async def call(name: str, cwd: Path, args: dict[str, Any], **env: Any) -> tuple[bool, str, Any]:
    """Run tool ``name`` with raw ``args``; return ``(is_error, text, details)``."""
    tool = TOOLS[name](make_env(cwd, **env))
    try:
        result = await tool.execute(tool.args_model.model_validate(args), ToolContext("t1"))
    except ToolError as exc:
        return True, exc.message, None
    assert len(result.content) == 1
    return False, result.content[0].text, result.details


def write(root: Path, files: dict[str, str | bytes]) -> None:
    """Create ``files`` (relative path -> text or bytes) under ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def git_init(root: Path) -> None:
    """Make ``root`` a git repository (no commits needed for ignore rules)."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)


@pytest.fixture(scope="session")
def big_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory holding 100,000 small files (``f000000.txt`` ..., each ``needle {i}``)."""
    root = tmp_path_factory.mktemp("big")
    for i in range(BIG_DIR_ENTRIES):
        fd = os.open(root / f"f{i:06d}.txt", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"needle %d\n" % i)
        os.close(fd)
    return root


def run(coro: Any) -> Any:
    """Run a coroutine from sync code (peer differential helpers)."""
    return asyncio.run(coro)
