"""Helpers for the MCP tests: the SDK's own client driving a real ``pi-lsp mcp`` subprocess."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.e2e.daemon_support import server_env


@asynccontextmanager
async def mcp_session(
    cwd: Path, *args: str, env: dict[str, str] | None = None, errlog: TextIO | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised MCP ``ClientSession`` to ``python -m pi_lsp mcp --cwd cwd *args``; the
    server's stderr goes to ``errlog`` (a real file) when given."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "pi_lsp", "mcp", "--cwd", str(cwd), *args],
        env=env or server_env(), cwd=str(cwd),
    )
    async with stdio_client(params, errlog=errlog or sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text_of(result) -> str:  # noqa: ANN001 - an mcp CallToolResult
    """The text blocks of an MCP tool result, joined."""
    return "".join(getattr(block, "text", "") for block in result.content)
