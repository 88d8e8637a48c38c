"""A tool session on the plain filesystem: what ``pi-lsp exec`` and ``pi-lsp mcp`` without an editor run.

:class:`LocalToolSession` owns a temp folder (bash's full-output files), a :class:`ProcessRegistry`
(every process group the tools start), the seven tools over :class:`LocalFileAccess`, a
:class:`ToolPipeline` with the chosen active tools and the approval policy as its first
``beforeToolCall`` hook. There is no user to ask: ``approvals`` (``"allow"``/``"deny"``) is the
answer wherever the policy would ask; deny rules and protected paths apply either way.
:meth:`LocalToolSession.close` ends every process group and removes the temp folder. ``command``
(``exec`` or ``mcp``) names the command in the hint a call of an inactive tool gets.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.policy.approvals import ApprovalPolicy
from pi_lsp.tools import DEFAULT_ACTIVE_TOOLS, create_tools
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.session_temp import create_session_temp, remove_session_temp
from pi_lsp.tools.shell.processes import ProcessRegistry


class UnknownTools(ValueError):
    """``--tools`` named tools that do not exist (the message lists them and the known ones)."""


def active_names(spec: str | None, known: list[str]) -> list[str]:
    """The active tools for a ``--tools`` value: ``None`` is Pi's default set, ``"all"`` every tool,
    else a comma-separated list; raises :class:`UnknownTools` for unknown names or a list that
    names no tool (``--tools ''`` would leave every call unanswerable)."""
    if spec is None:
        return [name for name in DEFAULT_ACTIVE_TOOLS if name in known]
    if spec.strip() == "all":
        return list(known)
    names = [name.strip() for name in spec.split(",") if name.strip()]
    if not names:
        raise UnknownTools(f"--tools names no tool (known: {', '.join(known)}; all: every tool)")
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UnknownTools(f"unknown tools: {', '.join(unknown)} (known: {', '.join(known)})")
    return names


def tools_option_hint(command: str) -> Callable[[str, list[str]], str]:
    """How to make a tool active in ``pi-lsp {command}`` (exec, mcp): its ``--tools`` value
    (:attr:`~pi_lsp.agent.pipeline.ToolPipeline.inactive_hint`)."""

    def hint(name: str, active: list[str]) -> str:
        return f"({name} is not active: start pi-lsp {command} with --tools {','.join([*active, name])} or --tools all)"

    return hint


class LocalToolSession:
    """The filesystem tools of one headless session (see the module docstring)."""

    def __init__(
        self,
        cwd: Path,
        *,
        tools_spec: str | None,
        approvals: str,
        journal: Callable[[dict[str, Any]], None],
        reason: str,
        temp_prefix: str = "pi-lsp-exec-",
        command: str = "exec",
    ) -> None:
        self.processes = ProcessRegistry()
        self.temp_dir = create_session_temp(temp_prefix, process_tag=self.processes.token)
        self.env = ToolEnvironment(
            cwd=cwd, files=LocalFileAccess(), temp_dir=self.temp_dir, workspace_folders=[cwd],
            processes=self.processes,
        )
        tools = create_tools(self.env)
        try:
            self.pipeline = ToolPipeline(tools, active=active_names(tools_spec, [t.name for t in tools]))
        except UnknownTools:
            remove_session_temp(self.temp_dir)
            raise
        self.pipeline.inactive_hint = tools_option_hint(command)
        self.policy = ApprovalPolicy(self.env, [t.name for t in tools], journal=journal, unavailable_reason=reason)
        self.policy.configure(fallback="allow" if approvals == "allow" else "deny")
        self.pipeline.add_before_hook(self.policy, first=True)

    async def close(self, *, include_children: bool = False) -> None:
        """End every process group the tools started (and, as a child subreaper, orphans) and
        remove the temp folder. Idempotent."""
        await self.processes.end_all(include_children=include_children)
        remove_session_temp(self.temp_dir)
