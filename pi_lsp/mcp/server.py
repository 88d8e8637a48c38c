"""``pi-lsp mcp``: an MCP server over stdio serving pi-lsp's tools (issue 20, design.md section 9).

Usage: ``pi-lsp mcp [--cwd DIR] [--editor NAME] [--tools a,b|all] [--approvals allow|deny]``.

Tools: the backend's active tools (see :mod:`pi_lsp.mcp.backends`) with pi-lsp's names, schemas and
descriptions, and MCP annotations from :mod:`pi_lsp.mcp.tool_hints`. A call's result is the
``ToolResultMessage``'s content (text and images) with ``isError``; Pi's error texts are kept. A
call with a progress token gets ``notifications/progress`` with the new output of a running
command; a cancelled call is aborted (its process group ended). The first result of a session
and the server's instructions say where the tools run (an editor's daemon, or the filesystem).

The daemon is looked up when the MCP client initialises, so an agent started before the editor
uses the filesystem until it restarts the server.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from pi_lsp import __version__
from pi_lsp.mcp.backends import Backend, NoSuchEditor, open_backend
from pi_lsp.mcp.tool_hints import hints_for
from pi_lsp.tools.leftovers import clean_leftovers

logger = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

INSTRUCTIONS = (
    "pi-lsp's coding tools (read, bash, edit, write, grep, find, ls as configured) for this workspace. "
)


def _content(block: dict[str, Any]) -> types.TextContent | types.ImageContent:
    if block.get("type") == "image":
        return types.ImageContent(data=block.get("data", ""), mime_type=block.get("mimeType", "image/png"))
    return types.TextContent(text=str(block.get("text", "")))


def to_call_tool_result(result: dict[str, Any], notice: str | None = None) -> types.CallToolResult:
    """A ``ToolResultMessage`` wire dict as an MCP ``CallToolResult`` (``notice`` appended as text)."""
    content = [_content(block) for block in result.get("content", []) if isinstance(block, dict)]
    if notice:
        content.append(types.TextContent(text=notice))
    return types.CallToolResult(content=content, is_error=bool(result.get("isError")))


class McpFace:
    """The MCP handlers over one backend."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._ids = itertools.count(1)
        self._told = False

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        tools = [tool for tool in await self.backend.list_tools() if tool.get("active")]
        return types.ListToolsResult(tools=[
            types.Tool(
                name=tool["name"],
                title=tool.get("label") or None,
                description=tool.get("description") or "",
                input_schema=tool.get("parameters") or {"type": "object"},
                annotations=types.ToolAnnotations(**_snake(hints_for(tool["name"], tool.get("label")))),
            )
            for tool in tools
        ])

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        call = {"id": f"mcp-{os.getpid()}-{next(self._ids)}", "name": params.name,
                "arguments": params.arguments or {}}
        on_output = None
        if ctx.meta and ctx.meta.get("progress_token") is not None:
            sent = [0]

            def on_output(text: str) -> None:
                sent[0] += 1
                _spawn(ctx.session.report_progress(sent[0], None, text[-2000:]))
        result = await self.backend.execute(call, on_output)
        notice = None if self._told else f"[pi-lsp: {self.backend.description}]"
        self._told = True
        return to_call_tool_result(result, notice)


def _snake(hints: dict[str, Any]) -> dict[str, Any]:
    names = {"readOnlyHint": "read_only_hint", "destructiveHint": "destructive_hint",
             "idempotentHint": "idempotent_hint", "openWorldHint": "open_world_hint", "title": "title"}
    return {names[key]: value for key, value in hints.items()}


def _spawn(coro: Any) -> None:
    """Run a progress notification in the background (its failure never fails the call)."""
    task = asyncio.ensure_future(coro)
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


async def serve(cwd: Path, *, editor: str | None, tools_spec: str | None, approvals: str,
                connect_timeout_seconds: float) -> int:
    """Serve MCP on stdio until the client closes it; returns the exit status (128 + the signal
    when SIGTERM, SIGHUP or SIGINT ended it: the tools' processes and temp folder are cleaned up
    either way)."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    stopped: list[int] = []

    def stop(signum: int) -> None:
        stopped.append(signum)
        if task is not None:
            task.cancel()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    backend = await open_backend(
        cwd, editor=editor, tools_spec=tools_spec, approvals=approvals,
        connect_timeout_seconds=connect_timeout_seconds,
    )
    logger.info("%s", backend.description)
    face = McpFace(backend)
    server: Server[Any] = Server(
        "pi-lsp", version=__version__, instructions=INSTRUCTIONS + backend.description,
        on_list_tools=face.list_tools, on_call_tool=face.call_tool,
    )
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    except asyncio.CancelledError:
        if not stopped:
            raise
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
        await backend.close()
    return 128 + stopped[0] if stopped else 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``pi-lsp mcp``; returns the exit status (2 for bad options)."""
    parser = argparse.ArgumentParser(prog="pi-lsp mcp", description="Serve pi-lsp's tools over MCP (stdio).")
    parser.add_argument("--cwd", default=os.getcwd(), help="the workspace (default: .)")
    parser.add_argument("--editor", default=None, help="use the daemon of this editor (client name or pid)")
    parser.add_argument("--tools", default=None, help="without an editor: active tools a,b,c or all")
    parser.add_argument("--approvals", choices=("allow", "deny"), default="allow",
                        help="without an editor: the answer where pi-lsp would ask (default allow)")
    parser.add_argument("--connect-timeout", type=float, default=5.0, help="seconds to reach a daemon")
    parser.add_argument("--log-file", default=None, help="write logs here (stderr by default)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each decision (INFO)")
    options = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if options.verbose else logging.WARNING, filename=options.log_file,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    cwd = Path(options.cwd).expanduser().absolute()
    if not cwd.is_dir():
        print(f"pi-lsp mcp: --cwd {cwd} is not a directory", file=sys.stderr)
        return 2
    clean_leftovers()
    try:
        return anyio.run(lambda: serve(
            cwd, editor=options.editor, tools_spec=options.tools, approvals=options.approvals,
            connect_timeout_seconds=options.connect_timeout,
        ))
    except (ValueError, NoSuchEditor) as exc:  # unknown --tools, an --editor that is not running
        print(f"pi-lsp mcp: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
