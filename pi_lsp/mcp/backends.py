"""Where ``pi-lsp mcp`` runs a tool call: in the editor's daemon, or on the filesystem.

Both backends answer the same two questions: which tools there are (``[{name, label, description,
parameters, active}]``) and the ``ToolResultMessage`` (wire dict) of one call. :func:`open_backend`
picks the daemon that serves the working directory (the most recently active editor, or the one
``--editor`` names) and falls back to the filesystem when there is none.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pi_lsp.agent.tool import AbortSignal, describe_tool
from pi_lsp.exec.local_session import LocalToolSession
from pi_lsp.ipc.registry import find_daemons
from pi_lsp.llm.types import ToolCall, to_wire
from pi_lsp.mcp.daemon_client import DaemonClient, DaemonError
from pi_lsp.policy.approvals import LogJournal

logger = logging.getLogger(__name__)

OutputSink = Callable[[str], None]


class Backend(Protocol):
    """What the MCP server needs of a backend."""

    description: str
    """One sentence for the server's instructions and the first result: where the tools run."""

    async def list_tools(self) -> list[dict[str, Any]]: ...

    async def execute(self, call: dict[str, Any], on_output: OutputSink | None) -> dict[str, Any]: ...

    async def close(self) -> None: ...


class DaemonBackend:
    """Tool calls relayed to an editor's daemon (its session ``external``)."""

    def __init__(self, client: DaemonClient) -> None:
        self.client = client
        name = client.entry.client or "an editor"
        self.description = (
            f"Tools run in {name}'s pi-lsp daemon (pid {client.entry.pid}): edits land in the editor's "
            "buffers (unsaved text kept, one undo step each), approvals are asked in the editor."
        )

    async def list_tools(self) -> list[dict[str, Any]]:
        return await self.client.list_tools()

    async def execute(self, call: dict[str, Any], on_output: OutputSink | None) -> dict[str, Any]:
        return await self.client.execute(call, on_output)

    async def close(self) -> None:
        await self.client.close()


class LocalBackend:
    """Tool calls on the filesystem, like ``pi-lsp exec`` (no editor to ask: ``approvals``)."""

    def __init__(self, cwd: Path, *, tools_spec: str | None, approvals: str) -> None:
        self.session = LocalToolSession(
            cwd, tools_spec=tools_spec, approvals=approvals,
            journal=LogJournal(logger),
            reason=f"pi-lsp mcp has no editor to ask (--approvals {approvals})",
            temp_prefix="pi-lsp-mcp-", command="mcp",
        )
        self.description = (
            f"No editor's pi-lsp daemon serves {cwd}: tools run on the filesystem (files the editor "
            "has open are written on disk behind its buffers; where pi-lsp would ask, the answer is "
            f"--approvals {approvals})."
        )

    async def list_tools(self) -> list[dict[str, Any]]:
        pipeline = self.session.pipeline
        active = pipeline.active_names
        return [describe_tool(tool, name in active) for name, tool in pipeline.tools.items()]

    async def execute(self, call: dict[str, Any], on_output: OutputSink | None) -> dict[str, Any]:
        signal = AbortSignal()
        emit = None
        if on_output is not None:
            seen: dict[str, int] = {}

            def emit(event: dict[str, Any]) -> None:
                if event.get("type") != "tool_execution_update":
                    return
                text = "".join(
                    part.get("text", "") for part in (event.get("partialResult") or {}).get("content", [])
                    if isinstance(part, dict)
                )
                start = seen.get(call["id"], 0)
                seen[call["id"]] = len(text)
                if len(text) > start:
                    on_output(text[start:])
        tool_call = ToolCall(id=call["id"], name=call["name"], arguments=call.get("arguments") or {})
        try:
            result = await self.session.pipeline.execute(tool_call, signal=signal, emit=emit)
        except BaseException:
            signal.abort("cancelled by the MCP client")
            raise
        return to_wire(result)

    async def close(self) -> None:
        await self.session.close()


class NoSuchEditor(Exception):
    """``--editor`` named an editor whose daemon does not serve the workspace (no silent fallback)."""


async def open_backend(
    cwd: Path, *, editor: str | None, tools_spec: str | None, approvals: str, connect_timeout_seconds: float,
) -> Backend:
    """The daemon backend for ``cwd`` when an editor's daemon serves it, else the local one.

    ``editor`` (``--editor``) keeps only daemons whose client name contains it or whose pid it is;
    none matching raises :class:`NoSuchEditor` (the user asked for an editor: no silent fallback to
    the filesystem). A daemon that refuses or cannot be reached is logged and the next one tried;
    when several serve ``cwd`` and ``editor`` is not given, a warning names them all.
    """
    daemons, refused = find_daemons(cwd, editor=editor)
    for reason in refused:
        logger.warning("ignored a registry entry: %s", reason)
    if editor and not daemons:
        running = ", ".join(f"{e.client or 'an editor'} (pid {e.pid})" for e in find_daemons(cwd)[0]) or "none"
        raise NoSuchEditor(f"no pi-lsp daemon of an editor matching --editor {editor!r} serves {cwd} (running: {running})")
    if len(daemons) > 1 and not editor:  # say which one, and how to pick another
        running = ", ".join(f"{e.client or 'an editor'} (pid {e.pid})" for e in daemons)
        logger.warning(
            "%d editors' pi-lsp daemons serve %s: %s; using the most recently active one first "
            "(--editor NAME or --editor PID picks another)", len(daemons), cwd, running,
        )
    for entry in daemons:
        try:
            return DaemonBackend(await DaemonClient.connect(entry, timeout_seconds=connect_timeout_seconds))
        except DaemonError as exc:
            logger.warning("daemon pid %s: %s", entry.pid, exc)
    return LocalBackend(cwd, tools_spec=tools_spec, approvals=approvals)
